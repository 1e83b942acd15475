/**
 * The demo app in-process for tests: a fresh data directory, SQLite or a fresh PostgreSQL
 * database, cheap password hashing, listening on a free loopback port.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@rampart/telemetry/logging/logger';
import { sharedPostgres } from '@rampart/test-services/postgres-server';
import { createDemoApp, type DemoApp } from '../app.js';
import { loadConfig } from '../config/config.js';
import type { ScryptParams } from '../security/password.js';
import type { Waf } from '../waf/waf.js';

/** Fast enough for tests; production hashes use `DEFAULT_PARAMS`. */
export const TEST_PASSWORD_PARAMS: ScryptParams = { N: 1024, r: 8, p: 1 };

export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASE_KINDS: readonly [DatabaseKind][] = [['sqlite'], ['postgres']];

const postgres = sharedPostgres('demo');

/** A fresh PostgreSQL database on this test file's server (started on first use). */
export const freshPostgresDatabase = (): Promise<string> => postgres.freshDatabase();

/** Stops this test file's PostgreSQL server, if one was started. */
export const stopPostgres = (): Promise<void> => postgres.stop();

export interface DemoServerOptions {
  /** A postgres:// URL; absent means SQLite in the data directory. */
  readonly databaseUrl?: string;
  /** Reuse a data directory (a restart); default a fresh one, removed by `stop()`. */
  readonly dataDir?: string;
  readonly waf?: Waf | null;
  readonly env?: Readonly<Record<string, string>>;
}

export interface DemoServer {
  readonly url: string;
  readonly demo: DemoApp;
  readonly dataDir: string;
  readonly logs: string[];
  stop(): Promise<void>;
}

export async function startDemo(options: DemoServerOptions = {}): Promise<DemoServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rampart-demo-'));
  const logs: string[] = [];
  let demo: DemoApp;
  try {
    const config = loadConfig({
      DEMO_DATA_DIR: dataDir,
      DEMO_PORT: '0',
      DEMO_SESSION_SECRET: 'test-secret-test-secret-test-secret-0123',
      ...(options.databaseUrl ? { DEMO_DATABASE_URL: options.databaseUrl } : {}),
      ...options.env,
    });
    demo = await createDemoApp({
      config,
      waf: options.waf ?? null,
      passwordParams: TEST_PASSWORD_PARAMS,
      logger: createLogger({
        service: 'rampart-client-demo',
        destination: { write: (line: string) => void logs.push(line) },
      }),
    });
  } catch (error) {
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const { url } = await demo.listen(0, '127.0.0.1');
  return {
    url,
    demo,
    dataDir,
    logs,
    async stop() {
      await demo.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
