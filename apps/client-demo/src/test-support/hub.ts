/**
 * The real hub (`apps/hub/dist/main.js`, built by turbo before these tests: `@rampart/hub` is a
 * devDependency) as a child process with its own redis-server and data directory, on a free
 * loopback port. Start-up waits (bounded) for `/health/ready`; `stop()` ends both.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { delay, findFreePort } from '@rampart/test-services/free-port';
import { startRedisServer } from '@rampart/test-services/redis-server';

const HUB_MAIN = join(
  dirname(createRequire(import.meta.url).resolve('@rampart/hub/package.json')),
  'dist',
  'main.js',
);

export interface TestHub {
  readonly url: string;
  readonly adminToken: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startTestHub(): Promise<TestHub> {
  if (!existsSync(HUB_MAIN)) throw new Error(`${HUB_MAIN} is missing: build the hub first`);
  const redis = await startRedisServer();
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-demo-hub-'));
  const port = await findFreePort();
  const adminToken = randomBytes(32).toString('base64url');
  const child = spawn(process.execPath, [HUB_MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      REDIS_URL: redis.url,
      HUB_ADMIN_TOKEN: adminToken,
      HUB_DATA_DIR: dataDir,
      HUB_HOST: '127.0.0.1',
      HUB_PORT: String(port),
      HUB_BUILD_DEBOUNCE_MS: '100',
      HUB_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2000) })).ok)
        return { url, adminToken, output: () => output, stop };
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  await stop();
  throw new Error(`the hub did not become ready:\n${output.slice(-3000)}`);
}
