#!/usr/bin/env node
/**
 * `npm run dev` for the demo, started by `turbo run dev` next to the hub:
 *
 * 1. Compiles the app (the provisioning code below is part of it: src/dev/provision.ts).
 * 2. Waits for the hub (`RAMPART_HUB_URL`, default http://127.0.0.1:4000) to answer
 *    `/health/ready`, up to DEMO_HUB_WAIT_SECONDS (240), with a clear message if it never does
 *    (and waits again if the hub restarts while step 4 runs).
 * 3. Reads the hub's admin token (`HUB_ADMIN_TOKEN`, else apps/hub/.data/admin-token).
 * 4. Makes sure the site `demo` exists and that apps/client-demo/.data/site-key (mode 0600,
 *    git-ignored) holds a key the hub accepts: creates the site, or rotates its key when the
 *    stored one is missing or refused; gives the site the demo rules when it has none.
 * 5. Recompiles in watch mode and runs the app with RAMPART_HUB_URL / RAMPART_SITE_KEY set,
 *    restarting it when the compiled output or a view changes.
 *
 * Keys and tokens are never printed: only the paths of the files that hold them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, watch } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const app = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Traces to the dev Jaeger and a Prometheus endpoint (`@rampart/telemetry`, see its README). */
const TELEMETRY = ['--import', '@rampart/telemetry/sdk/register'];
const data = join(app, '.data');
const keyFile = join(data, 'site-key');
const hubTokenFile = resolve(app, '..', 'hub', '.data', 'admin-token');
const hubUrl = (process.env.RAMPART_HUB_URL ?? 'http://127.0.0.1:4000').replace(/\/+$/, '');
const siteId = process.env.DEMO_SITE_ID ?? 'demo';
const hubWaitSeconds = Number(process.env.DEMO_HUB_WAIT_SECONDS ?? 240);
const children = [];

function log(message) {
  process.stdout.write(`[client-demo dev] ${message}\n`);
}

function stopAll(code) {
  for (const child of children) child.kill('SIGTERM');
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stopAll(0));

function adminToken() {
  if (process.env.HUB_ADMIN_TOKEN) return process.env.HUB_ADMIN_TOKEN;
  if (!existsSync(hubTokenFile)) {
    log(`no admin token: ${hubTokenFile} does not exist and HUB_ADMIN_TOKEN is not set`);
    stopAll(1);
  }
  return readFileSync(hubTokenFile, 'utf8').trim();
}

/**
 * Runs `dist/main.js`, restarting it when the compiled output or a view changes. Not
 * `node --watch`: under it, worker threads receive the watcher's own messages, which the
 * snapshot reader's integrity-check worker would take for its answer (and reject every
 * snapshot).
 */
function runWatched(env) {
  let child = null;
  let stopping = false;
  let timer = null;
  const start = () => {
    child = spawn(process.execPath, [...TELEMETRY, 'dist/main.js'], {
      cwd: app,
      env,
      stdio: 'inherit',
    });
  };
  const restart = () => {
    // Changes made while the old process shuts down are picked up by the new one.
    if (stopping) return;
    log('change detected: restarting the app');
    const old = child;
    if (!old || old.exitCode !== null || old.signalCode !== null) {
      start();
      return;
    }
    stopping = true;
    old.once('exit', () => {
      stopping = false;
      start();
    });
    old.kill('SIGTERM');
  };
  for (const dir of ['dist', 'src/views']) {
    mkdirSync(join(app, dir), { recursive: true });
    watch(join(app, dir), { recursive: true }, (_event, file) => {
      if (!file || String(file).endsWith('.map') || String(file).endsWith('.d.ts')) return;
      clearTimeout(timer);
      timer = setTimeout(restart, 300);
    });
  }
  start();
  return { kill: (signal) => child?.kill(signal) };
}

// TypeScript's compiler, run with this Node.js (found from here, whatever the PATH holds).
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const first = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: app,
  stdio: 'inherit',
});
if (first.status !== 0) {
  log(`the first compilation failed (${first.error?.message ?? `exit code ${first.status}`})`);
  process.exit(first.status || 1);
}

const { provisionWhenReady, waitForHub } = await import(
  pathToFileURL(join(app, 'dist', 'dev', 'provision.js')).href
);
let key;
try {
  // The hub writes its admin token before it listens: read the token once the hub answers.
  await waitForHub(hubUrl, hubWaitSeconds * 1000, log);
  ({ key } = await provisionWhenReady({
    hubUrl,
    adminToken: adminToken(),
    siteId,
    keyFile,
    log,
    timeoutMs: hubWaitSeconds * 1000,
  }));
} catch (error) {
  log(error.name === 'ProvisionError' ? error.message : (error.stack ?? String(error)));
  stopAll(1);
}

// The app starts once the watching compiler has finished its first pass, so that pass (which
// rewrites dist/) does not restart it straight away.
const watcher = spawn(
  process.execPath,
  [tsc, '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'],
  { cwd: app, stdio: ['ignore', 'pipe', 'inherit'] },
);
children.push(watcher);
let appStarted = false;
watcher.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (appStarted || !String(chunk).includes('Watching for file changes')) return;
  appStarted = true;
  children.push(
    runWatched({
      ...process.env,
      RAMPART_HUB_URL: hubUrl,
      RAMPART_SITE_KEY: key,
      RAMPART_SYNC_INTERVAL_MS: process.env.RAMPART_SYNC_INTERVAL_MS ?? '5000',
      DEMO_DATA_DIR: process.env.DEMO_DATA_DIR ?? data,
      DEMO_LOG_REQUESTS: process.env.DEMO_LOG_REQUESTS ?? 'true',
    }),
  );
});
