#!/usr/bin/env node
/**
 * `npm run dev` for the demo, started by `turbo run dev` next to the hub:
 *
 * 1. Waits for the hub (`RAMPART_HUB_URL`, default http://127.0.0.1:4000) to answer
 *    `/health/ready`, a bounded number of times, with a clear message if it never does.
 * 2. Reads the hub's admin token (`HUB_ADMIN_TOKEN`, else apps/hub/.data/admin-token).
 * 3. Makes sure the site `demo` exists and that apps/client-demo/.data/site-key (mode 0600,
 *    git-ignored) holds a key the hub accepts: creates the site, or rotates its key when the
 *    stored one is missing or refused.
 * 4. Gives the site a few demo rules when it has none.
 * 5. Compiles in watch mode and runs the app with RAMPART_HUB_URL / RAMPART_SITE_KEY set,
 *    restarting it when the compiled output changes.
 *
 * Keys and tokens are never printed: only the paths of the files that hold them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const app = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const data = join(app, '.data');
const keyFile = join(data, 'site-key');
const hubTokenFile = resolve(app, '..', 'hub', '.data', 'admin-token');
const hubUrl = (process.env.RAMPART_HUB_URL ?? 'http://127.0.0.1:4000').replace(/\/+$/, '');
const SITE_ID = process.env.DEMO_SITE_ID ?? 'demo';
const HUB_WAIT_SECONDS = Number(process.env.DEMO_HUB_WAIT_SECONDS ?? 240);

/** Rules a fresh demo site starts with (edit them in the hub afterwards). */
const DEMO_RULES = [
  {
    id: 'no-wp-admin',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    note: 'nothing here is WordPress: probes only',
  },
  {
    id: 'no-scanners',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
    note: 'a well-known scanner',
  },
  {
    id: 'login-rate',
    type: 'rate_limit',
    methods: ['POST'],
    when: [{ field: 'path', match: 'exact', value: '/login' }],
    key: { kind: 'ip' },
    windowSeconds: 60,
    limit: 10,
    note: 'credential stuffing: 10 login attempts per minute per address',
  },
  {
    id: 'watch-dotfiles',
    type: 'pattern',
    action: 'block',
    mode: 'monitor',
    when: [{ field: 'path', match: 'prefix', value: '/.' }],
    note: 'monitor only: see what probes for /.env, /.git and friends',
  },
];

const children = [];

function log(message) {
  process.stdout.write(`[client-demo dev] ${message}\n`);
}

function die(message) {
  log(message);
  for (const child of children) child.kill('SIGTERM');
  process.exit(1);
}

async function waitForHub() {
  const deadline = Date.now() + HUB_WAIT_SECONDS * 1000;
  let last = 'no answer';
  let announced = false;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${hubUrl}/health/ready`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    if (!announced) {
      log(`waiting for the hub at ${hubUrl} (up to ${HUB_WAIT_SECONDS} s)...`);
      announced = true;
    }
    await sleep(1000);
  }
  die(
    `the hub at ${hubUrl} was not ready after ${HUB_WAIT_SECONDS} s (${last}). ` +
      'Start everything with `npm run dev` at the repository root, or set RAMPART_HUB_URL.',
  );
}

function adminToken() {
  if (process.env.HUB_ADMIN_TOKEN) return process.env.HUB_ADMIN_TOKEN;
  if (!existsSync(hubTokenFile))
    die(`no admin token: ${hubTokenFile} does not exist and HUB_ADMIN_TOKEN is not set`);
  return readFileSync(hubTokenFile, 'utf8').trim();
}

async function hub(method, path, token, body) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${hubUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

function fail(what, { status, json }) {
  // The hub's error bodies carry messages, never credentials.
  die(`${what} failed: HTTP ${status} ${json?.message ? JSON.stringify(json.message) : ''}`);
}

function storeKey(key) {
  mkdirSync(data, { recursive: true });
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
}

/** True when the hub accepts `key` (any answer but 401 from the client endpoint). */
async function keyAccepted(key) {
  const response = await fetch(`${hubUrl}/v1/snapshot`, {
    method: 'HEAD',
    headers: { authorization: `Bearer ${key}`, 'x-rampart-instance': 'client-demo-dev' },
    signal: AbortSignal.timeout(10_000),
  });
  return response.status !== 401;
}

async function ensureSite(token) {
  const site = await hub('GET', `/v1/sites/${SITE_ID}`, token);
  if (site.status === 404) {
    const created = await hub('POST', '/v1/sites', token, {
      id: SITE_ID,
      name: 'Rampart demo shop (local)',
    });
    if (created.status !== 201 && created.status !== 200) fail(`creating site ${SITE_ID}`, created);
    storeKey(created.json.credentials.key);
    log(`created site "${SITE_ID}"; its key is in ${keyFile}`);
    return;
  }
  if (site.status !== 200) fail(`reading site ${SITE_ID}`, site);
  const stored = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '';
  if (stored && (await keyAccepted(stored))) {
    log(`site "${SITE_ID}" exists; using the key in ${keyFile}`);
    return;
  }
  const rotated = await hub('POST', `/v1/sites/${SITE_ID}/keys/rotate`, token, {
    revokeExisting: true,
  });
  if (rotated.status !== 201 && rotated.status !== 200)
    fail(`rotating the key of ${SITE_ID}`, rotated);
  storeKey(rotated.json.key);
  log(
    `site "${SITE_ID}" exists but ${stored ? 'the stored key was refused' : 'no key was stored'}: rotated; the new key is in ${keyFile}`,
  );
}

async function ensureRules(token) {
  const rules = await hub('GET', `/v1/sites/${SITE_ID}/rules`, token);
  if (rules.status !== 200) fail(`listing the rules of ${SITE_ID}`, rules);
  if (rules.json.rules.length > 0) {
    log(`site "${SITE_ID}" has ${rules.json.rules.length} rule(s); leaving them as they are`);
    return;
  }
  const imported = await hub('POST', `/v1/sites/${SITE_ID}/rules/import?mode=replace`, token, {
    rules: DEMO_RULES,
  });
  if (imported.status !== 200) fail(`adding the demo rules to ${SITE_ID}`, imported);
  log(`added ${DEMO_RULES.length} demo rules: ${DEMO_RULES.map((r) => r.id).join(', ')}`);
}

/**
 * Runs `dist/main.js`, restarting it (debounced) when the compiled output or a view changes.
 * Not `node --watch`: under it, worker threads receive the watcher's own messages, which the
 * snapshot reader's integrity-check worker would take for its answer (and reject every
 * snapshot).
 */
function runWatched(env) {
  let child = null;
  let stopping = false;
  let timer = null;
  const start = () => {
    child = spawn(process.execPath, ['dist/main.js'], { cwd: app, env, stdio: 'inherit' });
  };
  const restart = () => {
    // Changes while the old process is still shutting down are picked up by the new one.
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

function startApp() {
  const tsc = join(app, 'node_modules', '.bin', 'tsc');
  const compiler = existsSync(tsc) ? tsc : 'tsc';
  const first = spawnSync(compiler, ['-p', 'tsconfig.build.json'], { cwd: app, stdio: 'inherit' });
  if (first.status !== 0) process.exit(first.status ?? 1);
  const env = {
    ...process.env,
    RAMPART_HUB_URL: hubUrl,
    RAMPART_SITE_KEY: readFileSync(keyFile, 'utf8').trim(),
    RAMPART_SYNC_INTERVAL_MS: process.env.RAMPART_SYNC_INTERVAL_MS ?? '5000',
    DEMO_DATA_DIR: process.env.DEMO_DATA_DIR ?? data,
    DEMO_LOG_REQUESTS: process.env.DEMO_LOG_REQUESTS ?? 'true',
  };
  children.push(
    spawn(compiler, ['-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
      cwd: app,
      stdio: 'inherit',
    }),
    runWatched(env),
  );
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(0);
  });
}

await waitForHub();
const token = adminToken();
await ensureSite(token);
await ensureRules(token);
startApp();
