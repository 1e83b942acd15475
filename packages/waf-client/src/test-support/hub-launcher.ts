/**
 * The REAL hub for integration tests: `node apps/hub/dist/main.js` as a child process (built by
 * turbo before the tests: `@rampart/hub` is a devDependency) through the shared launcher of
 * `@rampart/test-services`, with its own redis-server, a temporary data directory and a fixed
 * port, so a test can stop it ("hub down") and start it again on the same address and data
 * ("hub back"). Output is collected over all runs so tests can assert that the site key never
 * appears in it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { delay, findFreePort } from '@rampart/test-services/free-port';
import { type HubProcess, randomToken, startHub } from '@rampart/test-services/hub-process';
import { type RedisServerHandle, startRedisServer } from '@rampart/test-services/redis-server';

const HUB_MAIN = join(
  dirname(createRequire(import.meta.url).resolve('@rampart/hub/package.json')),
  'dist',
  'main.js',
);

export interface RealHub {
  readonly url: string;
  readonly adminToken: string;
  /** Everything the hub wrote to stdout/stderr, over all its runs. */
  output(): string;
  /** Stops the hub process (Redis and data stay): the hub is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops everything and removes the data. */
  destroy(): Promise<void>;
  /** An admin API call; throws on a non-2xx answer. */
  admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Creates a site; resolves with its first key. */
  createSite(id: string): Promise<string>;
  /** Adds a rule and waits until the site publishes a version >= the one after it. */
  addRule(siteId: string, rule: unknown): Promise<number>;
  waitForVersion(siteId: string, version: number): Promise<void>;
}

export async function startRealHub(): Promise<RealHub> {
  const redis: RedisServerHandle = await startRedisServer();
  const port = await findFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-client-hub-'));
  const adminToken = randomToken();
  const url = `http://127.0.0.1:${port}`;
  let earlierOutput = '';
  let hub: HubProcess | undefined;

  const start = async () => {
    hub = await startHub({
      main: HUB_MAIN,
      redisUrl: redis.url,
      port,
      dataDir,
      adminToken,
      env: { HUB_BUILD_DEBOUNCE_MS: '200' },
    });
  };

  const stop = async () => {
    const running = hub;
    hub = undefined;
    if (!running) return;
    await running.stop();
    earlierOutput += running.output();
  };

  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status}: ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };

  const waitForVersion = async (siteId: string, version: number) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const site = await admin<{ currentVersion: number | null }>('GET', `/v1/sites/${siteId}`);
      if ((site.currentVersion ?? 0) >= version) return;
      if (Date.now() > deadline)
        throw new Error(`site ${siteId} did not publish version ${version}`);
      await delay(100);
    }
  };

  try {
    await start();
  } catch (error) {
    await stop();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  return {
    url,
    adminToken,
    output: () => earlierOutput + (hub?.output() ?? ''),
    stop,
    start,
    destroy: async () => {
      await stop();
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
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
      const before = await admin<{ currentVersion: number | null }>('GET', `/v1/sites/${siteId}`);
      await admin('POST', `/v1/sites/${siteId}/rules`, rule);
      const next = (before.currentVersion ?? 0) + 1;
      await waitForVersion(siteId, next);
      return next;
    },
  };
}
