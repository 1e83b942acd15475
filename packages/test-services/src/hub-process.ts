/**
 * The real Rampart hub as a child process for integration tests, shared by the hub's own tests,
 * the WAF client's and the demo's.
 *
 * The caller names the hub's compiled entry point (`apps/hub/dist/main.js`, built by turbo before
 * the tests), so this package does not depend on the hub. The hub gets its configuration in
 * environment variables, a loopback port (free, or a given one so a test can stop it and start it
 * again on the same address), and its own data directory unless one is given (two instances share
 * one to act as a cluster; a restart reuses it).
 *
 * Every wait is bounded: start-up polls `/health/live` until a deadline (or the process exits,
 * whose output then goes into the error); `stop()` sends SIGTERM (the hub closes its modules
 * through `enableShutdownHooks`) and SIGKILL after a grace period. Standard output and error are
 * collected, so tests can assert what was (never) logged, such as a secret.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay, findFreePort } from './free-port.js';
import { spawnNode } from './node-process.js';

const START_TIMEOUT_MS = 45_000;
const STOP_GRACE_MS = 10_000;

export interface HubOptions {
  /** The hub's compiled entry point (`apps/hub/dist/main.js`). */
  readonly main: string;
  readonly redisUrl: string;
  /** A postgres:// URL; absent means the embedded SQLite file in the data directory. */
  readonly databaseUrl?: string;
  /** Shared with another instance or kept across restarts; default a fresh temp directory removed by `stop()`. */
  readonly dataDir?: string;
  /** Default a free one. */
  readonly port?: number;
  /** Default a random 48-character token. */
  readonly adminToken?: string;
  /** Extra or overriding HUB_* variables. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface HubProcess {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly adminToken: string;
  readonly dataDir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, SIGKILL after a grace period; resolves with the exit code (null if killed). */
  stop(): Promise<number | null>;
}

/** A random token of `length` URL-safe characters. */
export function randomToken(length = 48): string {
  return randomBytes(length).toString('base64url').slice(0, length);
}

/** The environment of a test hub: short build debounce and reconcile interval, then `env`. */
export function hubEnvironment(
  options: Omit<HubOptions, 'main'>,
  port: number,
  dataDir: string,
  adminToken: string,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    REDIS_URL: options.redisUrl,
    HUB_ADMIN_TOKEN: adminToken,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: String(port),
    HUB_HOST: '127.0.0.1',
    HUB_BUILD_DEBOUNCE_MS: '300',
    HUB_RECONCILE_INTERVAL_MS: '500',
    HUB_LOG_LEVEL: 'warn',
  };
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  return { ...env, ...options.env };
}

/** Starts the hub and resolves once `/health/live` answers 200. */
export async function startHub(options: HubOptions): Promise<HubProcess> {
  if (!existsSync(options.main)) {
    throw new Error(
      `${options.main} is missing: build the hub first (npx turbo run build --filter=@rampart/hub)`,
    );
  }
  const port = options.port ?? (await findFreePort());
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rampart-hub-'));
  const adminToken = options.adminToken ?? randomToken();
  const hub = spawnNode(options.main, hubEnvironment(options, port, dataDir, adminToken));
  const url = `http://127.0.0.1:${port}`;

  let stopping: Promise<number | null> | undefined;
  const stop = () => {
    stopping ??= hub.stop(STOP_GRACE_MS).finally(() => {
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    });
    return stopping;
  };

  const started = await Promise.race([
    waitForLive(url, START_TIMEOUT_MS).then(
      () => 'live',
      (error: Error) => error.message,
    ),
    hub.exited.then(() => 'the hub exited during start-up'),
  ]);
  if (started !== 'live') {
    await stop();
    throw new Error(`${started}:\n${hub.output().slice(-4000)}`);
  }
  return {
    url,
    port,
    pid: hub.pid,
    adminToken,
    dataDir,
    output: () => hub.output(),
    stop,
  };
}

async function waitForLive(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/health/live`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await delay(100);
  }
  throw new Error(`the hub did not become live within ${timeoutMs} ms (${last})`);
}
