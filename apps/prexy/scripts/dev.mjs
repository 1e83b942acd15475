#!/usr/bin/env node
/**
 * `npm run dev` for prexy, started by `turbo run dev` next to the hub and the demo shop: prexy in
 * front of the demo, with the visible substitutions of prexy.dev.json (no hub involved).
 *
 * 1. Compiles prexy (`tsc -p tsconfig.build.json`).
 * 2. Recompiles in watch mode; once the watching compiler's first pass is done (that pass
 *    rewrites dist/), runs `dist/main.js --config prexy.dev.json`.
 * 3. Restarts prexy when the compiled output changes. Not `node --watch`: prexy must receive
 *    the SIGHUP of step 4 itself, and under `--watch` worker threads (the waf-client's, for a
 *    site with a hub) receive the watcher's own messages.
 * 4. Sends prexy SIGHUP when prexy.dev.json changes: prexy reloads it, or logs why it refused
 *    it and keeps the configuration in force. When prexy is not running (a file that was
 *    invalid at start makes it exit with code 2), it is started again instead.
 * 5. Prints the address to open and the upstream prexy fronts, then waits (bounded) for that
 *    upstream to answer: until the demo is up, prexy answers 502.
 * 6. Forwards SIGINT/SIGTERM: prexy finishes its requests in flight (at most 10 s), then the
 *    compiler is stopped.
 *
 * PREXY_HOST and PREXY_PORT override the file's `listen`, as they do for prexy itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, watch } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Traces to the dev Jaeger and a Prometheus endpoint (`@rampart/telemetry`, see its README). */
const TELEMETRY = ['--import', '@rampart/telemetry/sdk/register'];
const configName = 'prexy.dev.json';
const configFile = join(app, configName);
const upstreamWaitSeconds = Number(process.env.PREXY_DEV_UPSTREAM_WAIT_SECONDS ?? 300);
const children = [];

function log(message) {
  process.stdout.write(`[prexy dev] ${message}\n`);
}

/** Where prexy listens and what it fronts, as the dev file says now (best effort: for messages). */
function describe() {
  try {
    const file = JSON.parse(readFileSync(configFile, 'utf8'));
    const host = process.env.PREXY_HOST ?? file.listen?.host ?? '127.0.0.1';
    const port = process.env.PREXY_PORT ?? file.listen?.port ?? 8080;
    const routes = (file.sites ?? []).flatMap((site) => site.proxy?.routes ?? []);
    return {
      listen: `http://${host}:${port}/`,
      upstreams: [...new Set(routes.map((r) => r.upstream))],
    };
  } catch (error) {
    return { listen: undefined, upstreams: [], problem: error.message };
  }
}

function answers(origin) {
  return new Promise((done) => {
    let url;
    try {
      url = new URL(origin);
    } catch {
      done(false);
      return;
    }
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket = createConnection({ host: url.hostname, port });
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('connect', () => {
      socket.end();
      done(true);
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

/** Says once when the upstream answers, so the address to open is the last thing printed. */
async function announceWhenUp(upstream, listen) {
  const deadline = Date.now() + upstreamWaitSeconds * 1000;
  while (Date.now() < deadline) {
    if (await answers(upstream)) {
      log(`${upstream} answers: open ${listen}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  log(`${upstream} did not answer in ${upstreamWaitSeconds} s; prexy answers 502 until it does`);
}

/**
 * Runs prexy, restarting it on `restart()`, reloading it on `reload()`. `heapFlags` are prexy's
 * heap settings (`src/server/streaming-heap.ts`), given up front so prexy need not replace
 * itself, which would start the telemetry twice.
 */
function runPrexy(heapFlags) {
  let child = null;
  let stopping = false;
  const running = () => child !== null && child.exitCode === null && child.signalCode === null;
  const start = () => {
    const current = spawn(
      process.execPath,
      [...heapFlags, ...TELEMETRY, 'dist/main.js', '--config', configName],
      {
        cwd: app,
        env: process.env,
        stdio: 'inherit',
      },
    );
    child = current;
    current.once('exit', (code, signal) => {
      if (stopping || current !== child) return;
      if (code === 2) log(`prexy refused ${configName}; it starts again when the file changes`);
      else if (code === 1) log('prexy could not listen: is the port taken? (set PREXY_PORT)');
      else log(`prexy exited (${signal ?? `code ${code}`}); it starts again on the next change`);
    });
  };
  const restart = () => {
    // Changes made while the old process shuts down are picked up by the new one.
    if (stopping) return;
    if (!running()) {
      start();
      return;
    }
    log('compiled output changed: restarting prexy');
    stopping = true;
    child.once('exit', () => {
      stopping = false;
      start();
    });
    child.kill('SIGTERM');
  };
  const reload = () => {
    if (stopping) return;
    if (!running()) {
      log(`${configName} changed: starting prexy`);
      start();
      return;
    }
    log(`${configName} changed: asking prexy to reload it (SIGHUP)`);
    child.kill('SIGHUP');
  };
  const stop = async () => {
    stopping = true;
    if (!running()) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    if (running()) child.kill('SIGKILL');
  };
  start();
  return { restart, reload, stop };
}

function debounced(ms, action) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(action, ms);
  };
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

const watcher = spawn(
  process.execPath,
  [tsc, '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'],
  { cwd: app, stdio: ['ignore', 'pipe', 'inherit'] },
);
children.push(watcher);

let prexy = null;
let compiled = false;
watcher.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (compiled || !String(chunk).includes('Watching for file changes')) return;
  compiled = true;
  void import('../dist/server/streaming-heap.js').then(({ STREAMING_HEAP_FLAGS }) =>
    serve(STREAMING_HEAP_FLAGS),
  );
});

/** Once prexy is compiled: runs it, and restarts or reloads it as its output or file changes. */
function serve(heapFlags) {
  prexy = runPrexy(heapFlags);
  const restart = debounced(300, prexy.restart);
  watch(join(app, 'dist'), { recursive: true }, (_event, file) => {
    if (!file || String(file).endsWith('.map') || String(file).endsWith('.d.ts')) return;
    restart();
  });
  // The folder, not the file: editors save by writing a new file and renaming it over the old.
  const reload = debounced(200, prexy.reload);
  watch(app, (_event, file) => {
    if (String(file) === configName) reload();
  });
  const { listen, upstreams, problem } = describe();
  if (problem !== undefined) {
    log(`cannot read ${configFile}: ${problem}`);
    return;
  }
  log(`open ${listen} (prexy in front of ${upstreams.join(', ') || 'no upstream'})`);
  log(`rules: ${configFile} (edit it: prexy reloads it on save)`);
  log('until the demo is up (it waits for the hub), prexy answers 502 Bad Gateway');
  for (const upstream of upstreams) void announceWhenUp(upstream, listen);
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void (prexy?.stop() ?? Promise.resolve()).then(() => {
      for (const child of children) child.kill('SIGTERM');
      process.exit(0);
    });
  });
}
