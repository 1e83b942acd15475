/**
 * One hub with its own Redis and database, as most suites need: `startStack('sqlite' |
 * 'postgres')`, through the shared launcher of `@rampart/test-services/hub`. PostgreSQL is one
 * server per test file (started on first use, stopped by `stopPostgres()` in the file's
 * afterAll), with a fresh database per hub.
 *
 * The stack's `client` shares the hub's set of secrets, so `stop()` also fails if the hub ever
 * wrote one to its output: the admin token, or any site key the suite was issued.
 */
import { join } from 'node:path';
import { type Hub, type HubOptions, startHub } from '@rampart/test-services/hub';
import { sharedPostgres } from '@rampart/test-services/postgres-server';
import type { RedisServerHandle } from '@rampart/test-services/redis-server';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { HubClient } from './hub-client.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** For `describe.each`: every database the hub supports. */
export const DATABASE_KINDS: readonly [DatabaseKind][] = [['sqlite'], ['postgres']];

const postgres = sharedPostgres('hub');

/** A fresh PostgreSQL database on this test file's server (started on first use). */
export const freshPostgresDatabase = (): Promise<string> => postgres.freshDatabase();

/** Stops this test file's PostgreSQL server, if one was started. */
export const stopPostgres = (): Promise<void> => postgres.stop();

export interface HubStack {
  readonly hub: Hub;
  readonly redis: RedisServerHandle;
  readonly client: HubClient;
  readonly databaseUrl: string | undefined;
  /** Runs a query on the hub's database (SQLite read-only, beside the running hub). */
  query<Row = Record<string, unknown>>(sql: string): Promise<Row[]>;
  /** Stops the hub and Redis; fails if the hub's output contains a secret. */
  stop(): Promise<void>;
}

export async function startStack(
  kind: DatabaseKind,
  options: Omit<HubOptions, 'redis' | 'databaseUrl'> = {},
): Promise<HubStack> {
  const databaseUrl = kind === 'postgres' ? await freshPostgresDatabase() : undefined;
  const hub = await startHub({ ...options, databaseUrl });
  return {
    hub,
    redis: hub.redis,
    client: new HubClient(hub.url, hub.adminToken, hub.secrets),
    databaseUrl,
    query: (sql) => queryDatabase(databaseUrl, hub.dataDir, sql),
    stop: () => hub.close(),
  };
}

/** A query on a hub's database: PostgreSQL at `url`, else the SQLite file in `dataDir`. */
export async function queryDatabase<Row>(
  url: string | undefined,
  dataDir: string,
  sql: string,
): Promise<Row[]> {
  if (url === undefined) {
    const db = new SQLite(join(dataDir, 'hub.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all() as Row[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}
