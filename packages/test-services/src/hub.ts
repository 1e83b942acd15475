/**
 * The real Rampart hub for integration tests and benchmarks: `apps/hub/dist/main.js` through the
 * shared launcher (`service-process.ts`), with its Redis and its database, on a free loopback
 * port, ready once `/health/ready` answers 200 (Redis and the database reachable, migrations
 * applied).
 *
 * By default every hub gets its own redis-server (stopped by `close()`), the embedded SQLite
 * database and a fresh data directory (removed by `close()`). Instances of one cluster share
 * what they are given instead: a Redis, a PostgreSQL URL, a data directory, an admin token.
 *
 * `stop()` and `start()` take the hub down and bring it back on the same address and data;
 * `close()` ends everything and fails if the hub ever wrote a secret (the admin token, or a site
 * key it issued through `admin()`) to its output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay, findFreePort } from './free-port.js';
import { type RedisServerHandle, startRedisServer } from './redis-server.js';
import {
  baseEnvironment,
  compiledEntry,
  createServiceProcess,
  type FinishedRun,
  randomToken,
  runToExit,
} from './service-process.js';

const HUB_PACKAGE = '@rampart/hub';
const WAIT_MS = 30_000;

export interface HubOptions {
  /** Share this Redis (a cluster); default an own redis-server, stopped by `close()`. */
  readonly redis?: RedisServerHandle;
  /** A postgres:// URL; absent means the embedded SQLite file in the data directory. */
  readonly databaseUrl?: string;
  /** Shared by a cluster or kept across hubs; default a fresh directory removed by `close()`. */
  readonly dataDir?: string;
  /** Default a free one. */
  readonly port?: number;
  /** Default a random 48-character token. */
  readonly adminToken?: string;
  /** Extra or overriding `HUB_*` variables. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface Hub {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly adminToken: string;
  readonly dataDir: string;
  readonly redis: RedisServerHandle;
  readonly databaseUrl: string | undefined;
  /** The current process id; undefined while stopped. */
  readonly pid: number | undefined;
  /** Checked against the hub's output by `close()`; `admin()` adds every key the hub issues. */
  readonly secrets: Set<string>;
  /** Everything the hub wrote to stdout and stderr, over all its runs. */
  output(): string;
  /** Takes the hub down (its Redis, database and data stay). */
  stop(): Promise<void>;
  /** Brings it back on the same port and data, ready. */
  start(): Promise<void>;
  /** Stops the hub and what it owns; fails if its output holds a secret. */
  close(): Promise<void>;
  /** A management API call with the admin token; throws on an answer that is not 2xx. */
  admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Creates a site; resolves with its first key. */
  createSite(id: string): Promise<string>;
  /** Adds a rule and resolves, with that version, once the site has published the next one. */
  addRule(siteId: string, rule: unknown): Promise<number>;
  /** Resolves once the site's published version is at least `version`. */
  waitForVersion(siteId: string, version: number): Promise<void>;
}

/**
 * The environment of a test hub: loopback, quiet logs, a short build debounce and reconcile
 * interval so tests see builds quickly, then `env` over it.
 */
export function hubEnvironment(settings: {
  readonly redisUrl: string;
  readonly databaseUrl?: string;
  readonly port: number;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly env?: Readonly<Record<string, string>>;
}): Record<string, string> {
  return {
    ...baseEnvironment(),
    NODE_ENV: 'test',
    REDIS_URL: settings.redisUrl,
    HUB_ADMIN_TOKEN: settings.adminToken,
    HUB_DATA_DIR: settings.dataDir,
    HUB_PORT: String(settings.port),
    HUB_HOST: '127.0.0.1',
    HUB_BUILD_DEBOUNCE_MS: '300',
    HUB_RECONCILE_INTERVAL_MS: '500',
    HUB_LOG_LEVEL: 'warn',
    ...(settings.databaseUrl ? { DATABASE_URL: settings.databaseUrl } : {}),
    ...settings.env,
  };
}

/** Starts a hub (and, unless given, its Redis) and resolves once it is ready. */
export async function startHub(options: HubOptions = {}): Promise<Hub> {
  const main = compiledEntry(HUB_PACKAGE);
  const port = options.port ?? (await findFreePort());
  const adminToken = options.adminToken ?? randomToken();
  const ownRedis = options.redis === undefined;
  const redis = options.redis ?? (await startRedisServer());
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rampart-hub-'));
  const releaseOwned = async () => {
    if (ownRedis) await redis.stop();
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const service = createServiceProcess({
    name: 'hub',
    main,
    env: hubEnvironment({ ...options, redisUrl: redis.url, port, dataDir, adminToken }),
    port,
    readyPath: '/health/ready',
    secrets: [adminToken],
  });
  try {
    await service.start();
  } catch (error) {
    await service.close().catch(() => {});
    await releaseOwned();
    throw error;
  }

  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
    const parsed = (text ? JSON.parse(text) : undefined) as T;
    for (const key of issuedKeys(parsed)) service.secrets.add(key);
    return parsed;
  };

  const currentVersion = async (siteId: string) =>
    (await admin<{ currentVersion: number | null }>('GET', `/v1/sites/${siteId}`)).currentVersion ??
    0;

  const waitForVersion = async (siteId: string, version: number) => {
    const deadline = Date.now() + WAIT_MS;
    let seen = await currentVersion(siteId);
    while (seen < version) {
      if (Date.now() > deadline)
        throw new Error(`site ${siteId} did not publish version ${version} (has ${seen})`);
      await delay(100);
      seen = await currentVersion(siteId);
    }
  };

  return {
    url: service.url,
    port: service.port,
    adminToken,
    dataDir,
    redis,
    databaseUrl: options.databaseUrl,
    get pid() {
      return service.pid;
    },
    secrets: service.secrets,
    output: () => service.output(),
    stop: async () => {
      await service.stop();
    },
    start: () => service.start(),
    close: async () => {
      try {
        await service.close();
      } finally {
        await releaseOwned();
      }
    },
    admin,
    waitForVersion,
    createSite: async (id) => {
      const created = await admin<{ credentials: { key: string } }>('POST', '/v1/sites', {
        id,
        name: `${id}.example`,
      });
      return created.credentials.key;
    },
    addRule: async (siteId, rule) => {
      const next = (await currentVersion(siteId)) + 1;
      await admin('POST', `/v1/sites/${siteId}/rules`, rule);
      await waitForVersion(siteId, next);
      return next;
    },
  };
}

/**
 * Starts the hub with `env` merged over a valid test configuration (an `undefined` value removes
 * a variable) and expects it to refuse: resolves with its exit code and output.
 */
export async function runHubExpectingFailure(
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 20_000,
): Promise<FinishedRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-hub-'));
  try {
    const merged: Record<string, string> = {};
    const base = hubEnvironment({
      redisUrl: 'redis://127.0.0.1:1',
      port: await findFreePort(),
      dataDir,
      adminToken: randomToken(),
    });
    for (const [name, value] of Object.entries({ ...base, ...env })) {
      if (value !== undefined) merged[name] = value;
    }
    return await runToExit(compiledEntry(HUB_PACKAGE), merged, timeoutMs);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Site keys in an answer that issues them (site creation, key rotation). */
function issuedKeys(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const { credentials, key } = body as { credentials?: { key?: unknown }; key?: unknown };
  return [credentials?.key, key].filter((k): k is string => typeof k === 'string');
}
