/**
 * The hub's database: PostgreSQL when DATABASE_URL is a postgres:// URL, otherwise an embedded
 * SQLite file in the data directory, behind one Kysely instance so every query is written once.
 * Migrations run before the module finishes initialising, so no request ever sees an old schema.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { migrationProvider } from './migrations/migration-provider.js';
import { HubSchema } from './schema.js';
import { type Checkpointer, startCheckpointer } from './sqlite-checkpointer.js';
import { openSqlite } from './sqlite-connection.js';

export type Dialect = 'sqlite' | 'postgres';

@Injectable()
export class DatabaseService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DatabaseService.name);
  readonly db: Kysely<HubSchema>;
  readonly dialect: Dialect;
  /** The SQLite file's path (undefined on PostgreSQL), for threads with connections of their own. */
  readonly sqliteFile: string | undefined;
  private readonly checkpointer: Checkpointer | undefined;

  constructor(@Inject(HUB_CONFIG) config: HubConfig) {
    if (config.databaseUrl) {
      this.dialect = 'postgres';
      this.sqliteFile = undefined;
      // int8 (COUNT, SUM) as numbers: every count here fits comfortably in a double.
      pg.types.setTypeParser(20, (value) => Number(value));
      const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
      // An idle connection the server closes (restart, failover, terminated backend) is reported
      // here; without a listener the 'error' event would end the process. The pool drops that
      // connection and the next query opens a new one; readiness shows whether that works.
      pool.on('error', (error) =>
        this.logger.warn(`a PostgreSQL connection was lost: ${error.message}`),
      );
      this.db = new Kysely<HubSchema>({ dialect: new PostgresDialect({ pool }) });
    } else {
      this.dialect = 'sqlite';
      mkdirSync(config.dataDir, { recursive: true });
      const path = join(config.dataDir, 'hub.sqlite');
      const file = openSqlite(path);
      this.sqliteFile = path;
      this.checkpointer = startCheckpointer(path, this.logger);
      this.db = new Kysely<HubSchema>({
        dialect: new SqliteDialect({ database: withStatementCache(file) }),
      });
    }
  }

  async onModuleInit(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    for (const r of results ?? []) {
      if (r.status === 'Success') this.logger.log(`applied migration ${r.migrationName}`);
      if (r.status === 'Error') this.logger.error(`migration ${r.migrationName} failed`);
    }
    if (error) throw error instanceof Error ? error : new Error(String(error));
    this.logger.log(`database ready (${this.dialect})`);
  }

  /** A trivial round trip, for readiness. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async onModuleDestroy(): Promise<void> {
    await this.checkpointer?.stop();
    await this.db.destroy();
  }
}

/** Prepared statements kept per SQLite connection (least recently used out). */
const STATEMENT_CACHE = 256;

/**
 * `file` as Kysely's SQLite dialect sees it, with its prepared statements reused: Kysely asks
 * for a new one for every query it runs, and compiling the SQL again each time was a good part
 * of the cost of the hub's frequent queries. Statements run one at a time on the one connection, and none
 * is left iterating (the hub never streams a query), so sharing them is safe.
 */
function withStatementCache(file: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => file.close(),
    prepare: (source) => {
      let statement = cache.get(source);
      if (statement) cache.delete(source);
      else {
        statement = file.prepare(source);
        if (cache.size >= STATEMENT_CACHE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(source, statement);
      return statement;
    },
  };
}
