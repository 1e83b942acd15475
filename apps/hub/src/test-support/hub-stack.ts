/**
 * One hub with its own Redis and database, as most suites need: `startStack('sqlite' |
 * 'postgres')`. PostgreSQL is one server per test file (started on first use, stopped by
 * `stopPostgres()` in the file's afterAll), with a fresh database per hub.
 *
 * `stop()` also checks that the hub never wrote a secret (the admin token, any site key the
 * suite was given) to its output.
 */
import { join } from 'node:path';
import { sharedPostgres } from '@rampart/test-services/postgres-server';
import { type RedisServerHandle, startRedisServer } from '@rampart/test-services/redis-server';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { HubClient } from './hub-client.js';
import { type HubOptions, type HubProcess, startHub } from './hub-process.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** For `describe.each`: every database the hub supports. */
export const DATABASE_KINDS: readonly [DatabaseKind][] = [['sqlite'], ['postgres']];

const postgres = sharedPostgres('hub');

/** A fresh PostgreSQL database on this test file's server (started on first use). */
export const freshPostgresDatabase = (): Promise<string> => postgres.freshDatabase();

/** Stops this test file's PostgreSQL server, if one was started. */
export const stopPostgres = (): Promise<void> => postgres.stop();

export interface HubStack {
  readonly hub: HubProcess;
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
  options: Omit<HubOptions, 'redisUrl' | 'databaseUrl'> = {},
): Promise<HubStack> {
  const [redis, databaseUrl] = await Promise.all([
    startRedisServer(),
    kind === 'postgres' ? freshPostgresDatabase() : Promise.resolve(undefined),
  ]);
  let hub: HubProcess;
  try {
    hub = await startHub({ ...options, redisUrl: redis.url, databaseUrl });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  const client = new HubClient(hub.url, hub.adminToken);
  return {
    hub,
    redis,
    client,
    databaseUrl,
    query: (sql) => queryDatabase(databaseUrl, hub.dataDir, sql),
    stop: async () => {
      try {
        await hub.stop();
        client.expectNoSecret('the hub output', hub.output());
      } finally {
        await redis.stop();
      }
    },
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
