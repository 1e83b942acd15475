#!/usr/bin/env node
/**
 * `npm run dev` for the hub: embedded defaults, nothing to configure.
 *
 * - Data (SQLite database, snapshots, datasets) in apps/hub/.data.
 * - Without REDIS_URL, starts a local redis-server on 127.0.0.1:16379 with its files in
 *   .data/redis (reused if one already answers there) and stops it on exit.
 * - Without HUB_ADMIN_TOKEN, uses the token in .data/admin-token (created once, mode 0600); its
 *   path is printed, never the token.
 * - Compiles in watch mode, starts the hub after the compiler's first pass, and restarts it
 *   when the compiled output changes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Traces to the dev Jaeger and a Prometheus endpoint (`@rampart/telemetry`, see its README). */
const TELEMETRY = ['--import', '@rampart/telemetry/sdk/register'];
const data = join(app, '.data');
const DEV_REDIS_PORT = 16379;
const children = [];

function log(message) {
  process.stdout.write(`[hub dev] ${message}\n`);
}

function answers(port) {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.end();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function ensureRedis() {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  const url = `redis://127.0.0.1:${DEV_REDIS_PORT}`;
  if (await answers(DEV_REDIS_PORT)) {
    log(`using the redis-server already on ${url}`);
    return url;
  }
  const dir = join(data, 'redis');
  mkdirSync(dir, { recursive: true });
  const redis = spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(DEV_REDIS_PORT),
      '--dir',
      dir,
      '--save',
      '60 1',
      '--appendonly',
      'no',
    ],
    { stdio: 'ignore' },
  );
  redis.once('error', (error) => {
    log(`cannot start redis-server (${error.message}); install it or set REDIS_URL`);
    process.exit(1);
  });
  children.push(redis);
  for (let i = 0; i < 50 && !(await answers(DEV_REDIS_PORT)); i++)
    await new Promise((r) => setTimeout(r, 100));
  log(`started redis-server on ${url} (data in ${dir})`);
  return url;
}

function adminToken() {
  if (process.env.HUB_ADMIN_TOKEN) return process.env.HUB_ADMIN_TOKEN;
  const file = join(data, 'admin-token');
  if (!existsSync(file))
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  log(`admin token: in ${file} (use: Authorization: Bearer $(cat ${file}))`);
  return readFileSync(file, 'utf8').trim();
}

/**
 * The hub first, and only once it has exited (at most 10 s) the rest: Redis stopped under a
 * closing hub only makes it log connection errors on its way out.
 */
async function stopAll() {
  const running = hub && hub.exitCode === null && hub.signalCode === null;
  if (running) {
    const exited = new Promise((resolve) => hub.once('exit', resolve));
    hub.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  for (const child of children) child.kill('SIGTERM');
}

mkdirSync(data, { recursive: true });
const env = {
  ...process.env,
  REDIS_URL: await ensureRedis(),
  HUB_ADMIN_TOKEN: adminToken(),
  HUB_DATA_DIR: process.env.HUB_DATA_DIR ?? data,
  // The dev Jaeger (`npm run dev` starts it: packages/telemetry/scripts/dev-jaeger.mjs).
  HUB_JAEGER_QUERY_URL: process.env.HUB_JAEGER_QUERY_URL ?? 'http://127.0.0.1:16686',
};
const tsc = join(app, 'node_modules', '.bin', 'tsc');
const compiler = existsSync(tsc) ? tsc : 'tsc';
const first = spawnSync(compiler, ['-p', 'tsconfig.build.json'], { cwd: app, stdio: 'inherit' });
if (first.status !== 0) process.exit(first.status ?? 1);
const watcher = spawn(compiler, ['-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
  cwd: app,
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.push(watcher);
// The hub starts once the watching compiler has finished its first pass: that pass rewrites
// dist/, and a hub started before it would restart about ten seconds in, under the feet of
// whoever just found it ready (the demo's provisioning did).
let hub;
watcher.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (hub || !String(chunk).includes('Watching for file changes')) return;
  hub = spawn(process.execPath, ['--watch-path=dist', ...TELEMETRY, 'dist/main.js'], {
    cwd: app,
    env,
    stdio: 'inherit',
  });
});
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void stopAll().then(() => process.exit(0));
  });
}
