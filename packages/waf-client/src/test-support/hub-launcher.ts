/**
 * The REAL hub for integration tests: `node apps/hub/dist/main.js` as a child process (built by
 * turbo before the tests: `@rampart/hub` is a devDependency), with its own redis-server from
 * `@rampart/test-services`, a temporary data directory and a fixed port so a test can stop it
 * ("hub down") and start it again on the same address and data ("hub back").
 *
 * Follows the approach of the hub's own `src/test-support/hub-process.ts`: bounded start-up
 * (polls `/health/live`), SIGTERM then SIGKILL, output collected so tests can assert that the
 * site key never appears in it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { delay, findFreePort } from '@rampart/test-services/free-port';
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
  if (!existsSync(HUB_MAIN)) {
    throw new Error(
      `${HUB_MAIN} is missing: build the hub first (npx turbo run build --filter=@rampart/hub)`,
    );
  }
  const redis: RedisServerHandle = await startRedisServer();
  const port = await findFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-client-hub-'));
  const adminToken = randomBytes(36).toString('base64url');
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();

  const start = async () => {
    const proc = spawn(process.execPath, [HUB_MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        NODE_ENV: 'test',
        REDIS_URL: redis.url,
        HUB_ADMIN_TOKEN: adminToken,
        HUB_DATA_DIR: dataDir,
        HUB_PORT: String(port),
        HUB_HOST: '127.0.0.1',
        HUB_BUILD_DEBOUNCE_MS: '200',
        HUB_RECONCILE_INTERVAL_MS: '500',
        HUB_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    const kill = () => proc.kill('SIGKILL');
    process.on('exit', kill);
    exited = new Promise((resolve) =>
      proc.once('exit', (code) => {
        process.removeListener('exit', kill);
        resolve(code);
      }),
    );
    const deadline = Date.now() + 45_000;
    for (;;) {
      if (proc.exitCode !== null)
        throw new Error(`the hub exited during start-up:\n${output.slice(-3000)}`);
      try {
        const res = await fetch(`${url}/health/live`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(`the hub did not start within 45 s:\n${output.slice(-3000)}`);
      await delay(100);
    }
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
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
    output: () => output,
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
