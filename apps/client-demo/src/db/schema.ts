/**
 * The demo's tables as Kysely sees them. Portable across SQLite and PostgreSQL on purpose:
 * timestamps are ISO 8601 text and money is an integer number of cents.
 */
import type { Generated } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  /** Lower-cased; unique. */
  email: string;
  name: string;
  /** `scrypt$N$r$p$salt$hash` (see `security/password.ts`). */
  password_hash: string;
  created_at: string;
}

export interface ProductsTable {
  id: Generated<number>;
  /** URL segment of the product page; unique. */
  slug: string;
  name: string;
  description: string;
  price_cents: number;
  created_at: string;
}

/** Facts about the database itself; `seeded_at` marks that the seed data went in (once, ever). */
export interface AppMetaTable {
  key: string;
  value: string;
}

export interface DemoSchema {
  users: UsersTable;
  products: ProductsTable;
  app_meta: AppMetaTable;
}
