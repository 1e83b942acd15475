/**
 * The demo's database: PostgreSQL when DEMO_DATABASE_URL is set (a small pool: the app is one of
 * many instances sharing one server, which is exactly the resource a credential-stuffing burst
 * exhausts), otherwise an embedded SQLite file in the data directory. One Kysely instance, so
 * every query is written once; migrations run before the app listens.
 */
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import type { Dialect } from './dialect.js';
import { migrationProvider } from './migrations/migration-provider.js';
import type { DemoSchema } from './schema.js';

export interface DatabaseOptions {
  /** A postgres:// URL, or null for SQLite in `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly poolMax: number;
}

export interface Database {
  readonly db: Kysely<DemoSchema>;
  readonly dialect: Dialect;
  /** Applies pending migrations; returns the names applied now. */
  migrate(): Promise<string[]>;
  /** A trivial round trip, for `/healthz`. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function openDatabase(options: DatabaseOptions): Database {
  let db: Kysely<DemoSchema>;
  let dialect: Dialect;
  if (options.databaseUrl) {
    dialect = 'postgres';
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolMax,
      // Fail a request rather than queue it forever when every connection is busy.
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
    });
    db = new Kysely<DemoSchema>({ dialect: new PostgresDialect({ pool }) });
  } else {
    dialect = 'sqlite';
    const file = new SQLite(join(options.dataDir, 'demo.sqlite'));
    file.pragma('journal_mode = WAL');
    file.pragma('busy_timeout = 5000');
    db = new Kysely<DemoSchema>({ dialect: new SqliteDialect({ database: file }) });
  }
  return {
    db,
    dialect,
    async migrate() {
      const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
