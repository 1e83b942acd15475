/**
 * Seed data: a demo user and a few products, inserted on the first start only.
 *
 * "First" is recorded in `app_meta.seeded_at`, claimed in the same transaction that inserts the
 * rows, so a restart (or a second instance starting at the same moment on the same PostgreSQL
 * database) never seeds twice, and rows an operator deleted later are not brought back.
 */
import type { Kysely } from 'kysely';
import { normalizeEmail } from '../models/user.js';
import { hashPassword, type ScryptParams } from '../security/password.js';
import type { DemoSchema } from './schema.js';

/** The demo account (documented in the README; never logged). */
export const DEMO_USER = {
  email: 'demo@rampart.test',
  name: 'Dana Demo',
  password: 'correct-horse-battery-staple',
} as const;

export const SEED_PRODUCTS = [
  {
    slug: 'cedar-raised-bed',
    name: 'Cedar raised bed',
    description: 'A 120 x 60 cm raised garden bed of untreated red cedar, flat-packed.',
    price_cents: 12900,
  },
  {
    slug: 'copper-watering-can',
    name: 'Copper watering can',
    description: 'Five litres, long spout, a brass rose for seedlings.',
    price_cents: 6450,
  },
  {
    slug: 'heirloom-tomato-seeds',
    name: 'Heirloom tomato seeds',
    description: 'Twelve varieties, about 30 seeds each, from a small organic grower.',
    price_cents: 1899,
  },
  {
    slug: 'ash-handled-hori-hori',
    name: 'Ash-handled hori-hori',
    description: 'Japanese digging knife with a serrated edge and a leather sheath.',
    price_cents: 3400,
  },
  {
    slug: 'wool-gardening-gloves',
    name: 'Wool gardening gloves',
    description: 'Merino-lined, nitrile palm, machine washable. Sizes S to XL.',
    price_cents: 2250,
  },
  {
    slug: 'compost-thermometer',
    name: 'Compost thermometer',
    description: 'A 50 cm stainless probe that tells you when the heap is cooking.',
    price_cents: 2795,
  },
] as const;

export interface SeedResult {
  /** True when this call inserted the seed data, false when it was there already. */
  readonly seeded: boolean;
}

export async function seed(
  db: Kysely<DemoSchema>,
  passwordParams?: ScryptParams,
): Promise<SeedResult> {
  const done = await db
    .selectFrom('app_meta')
    .select('value')
    .where('key', '=', 'seeded_at')
    .executeTakeFirst();
  if (done) return { seeded: false };
  // Hashed outside the transaction: it takes a fraction of a second and needs no database.
  const passwordHash = await hashPassword(DEMO_USER.password, passwordParams);
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    const claim = await trx
      .insertInto('app_meta')
      .values({ key: 'seeded_at', value: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(claim.numInsertedOrUpdatedRows ?? 0n) === 0) return { seeded: false };
    await trx
      .insertInto('users')
      .values({
        email: normalizeEmail(DEMO_USER.email),
        name: DEMO_USER.name,
        password_hash: passwordHash,
        created_at: now,
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .execute();
    await trx
      .insertInto('products')
      .values(SEED_PRODUCTS.map((p) => ({ ...p, created_at: now })))
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    return { seeded: true };
  });
}
