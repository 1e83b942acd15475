import { randomBytes } from 'node:crypto';
import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import type { Kysely, Transaction } from 'kysely';
import { issueSiteKey } from '../auth/secrets.js';
import { DatabaseService } from '../database/database.service.js';
import { HubSchema } from '../database/schema.js';
import { PublicationChannel } from '../publications/publication-channel.js';
import { IssuedKeyView, KeyView, SiteView } from './sites.dto.js';

type Db = Kysely<HubSchema> | Transaction<HubSchema>;

@Injectable()
export class SitesService {
  constructor(
    private readonly database: DatabaseService,
    private readonly publications: PublicationChannel,
  ) {}

  async create(name: string, id?: string): Promise<{ site: SiteView; credentials: IssuedKeyView }> {
    const siteId = id ?? `site-${randomBytes(6).toString('hex')}`;
    const now = new Date().toISOString();
    return this.database.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('sites')
        .values({
          id: siteId,
          name,
          created_at: now,
          rules_revision: 0,
          built_revision: 0,
          failed_revision: 0,
          signal_key: newSignalKey(),
        })
        .execute()
        .catch((error: unknown) => {
          // An existing id (also one created concurrently) hits the primary key.
          if (isUniqueViolation(error))
            throw new ConflictException(`site "${siteId}" already exists`);
          throw error;
        });
      const credentials = await this.insertKey(tx, siteId, now);
      return { site: await this.get(siteId, tx), credentials };
    });
  }

  async list(): Promise<SiteView[]> {
    const rows = await this.siteQuery(this.database.db).orderBy('sites.created_at').execute();
    return rows.map(toView);
  }

  /** The site, or 404. */
  async get(siteId: string, db: Db = this.database.db): Promise<SiteView> {
    const row = await this.siteQuery(db).where('sites.id', '=', siteId).executeTakeFirst();
    if (!row) throw new NotFoundException(`site "${siteId}" does not exist`);
    return toView(row);
  }

  /** The site's signal key, made now if it has none (sites older than signals). */
  async signalKey(siteId: string): Promise<string> {
    const db = this.database.db;
    await db
      .updateTable('sites')
      .set({ signal_key: newSignalKey() })
      .where('id', '=', siteId)
      .where('signal_key', 'is', null)
      .execute();
    const row = await db
      .selectFrom('sites')
      .select('signal_key')
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (!row?.signal_key) throw new NotFoundException(`site "${siteId}" does not exist`);
    return row.signal_key;
  }

  /**
   * Issues a new key; by default revokes the others in the same transaction. Polls held with a
   * revoked key are then answered, so their clients hear 401 on the next one.
   */
  async rotateKey(siteId: string, revokeExisting: boolean): Promise<IssuedKeyView> {
    const issued = await this.database.db.transaction().execute(async (tx) => {
      await this.get(siteId, tx);
      const now = new Date().toISOString();
      if (revokeExisting) {
        await tx
          .updateTable('site_keys')
          .set({ revoked_at: now })
          .where('site_id', '=', siteId)
          .where('revoked_at', 'is', null)
          .execute();
      }
      return this.insertKey(tx, siteId, now);
    });
    if (revokeExisting) await this.publications.announce(siteId, 'a key was revoked');
    return issued;
  }

  async listKeys(siteId: string): Promise<KeyView[]> {
    await this.get(siteId);
    const rows = await this.database.db
      .selectFrom('site_keys')
      .select(['id', 'created_at', 'revoked_at'])
      .where('site_id', '=', siteId)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({ keyId: r.id, createdAt: r.created_at, revokedAt: r.revoked_at }));
  }

  async revokeKey(siteId: string, keyId: string): Promise<void> {
    const result = await this.database.db
      .updateTable('site_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('site_id', '=', siteId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      throw new NotFoundException(`site "${siteId}" has no live key "${keyId}"`);
    }
    await this.publications.announce(siteId, 'a key was revoked');
  }

  private async insertKey(tx: Db, siteId: string, now: string): Promise<IssuedKeyView> {
    const issued = issueSiteKey();
    await tx
      .insertInto('site_keys')
      .values({
        id: issued.id,
        site_id: siteId,
        secret_hash: issued.hash,
        created_at: now,
        revoked_at: null,
      })
      .execute();
    return { keyId: issued.id, key: issued.key };
  }

  private siteQuery(db: Db) {
    return db
      .selectFrom('sites')
      .leftJoin(
        (eb) =>
          eb
            .selectFrom('snapshots')
            .select(['site_id', (e) => e.fn.max('version').as('current_version')])
            .groupBy('site_id')
            .as('latest'),
        (join) => join.onRef('latest.site_id', '=', 'sites.id'),
      )
      .select([
        'sites.id',
        'sites.name',
        'sites.created_at',
        'sites.rules_revision',
        'sites.built_revision',
        'latest.current_version',
      ]);
  }
}

function toView(row: {
  id: string;
  name: string;
  created_at: string;
  rules_revision: number;
  built_revision: number;
  current_version: number | null;
}): SiteView {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    rulesRevision: Number(row.rules_revision),
    builtRevision: Number(row.built_revision),
    currentVersion: row.current_version === null ? null : Number(row.current_version),
  };
}

/** A primary-key or unique violation, from SQLite or PostgreSQL. */
/** 256 random bits, hex: the HMAC key for the site's account identifiers. */
function newSignalKey(): string {
  return randomBytes(32).toString('hex');
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'));
}

/**
 * Records a change to what the site's snapshot holds (its rules, its prexy configuration): the
 * revision the next build must catch up to. Inside a transaction, the update also locks the
 * site's row (PostgreSQL) or takes the write lock (SQLite) before anything is read, so concurrent
 * changes to one site apply one after the other. Resolves false when there is no such site.
 */
export async function bumpRulesRevision(
  tx: Transaction<HubSchema>,
  siteId: string,
): Promise<boolean> {
  const bumped = await tx
    .updateTable('sites')
    .set((eb) => ({ rules_revision: eb('rules_revision', '+', 1) }))
    .where('id', '=', siteId)
    .executeTakeFirst();
  return Number(bumped.numUpdatedRows) > 0;
}
