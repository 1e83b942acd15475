/**
 * `npm run bench:middleware`: what the WAF costs the demo's cheapest route (`GET /robots.txt`: a
 * constant, no session, no database), and how long a snapshot swap stalls the app under load.
 *
 * 1. Build (or reuse) five snapshot versions of ~1.07M real ranges with every rule type (see
 *    `bench-data.ts`) and 1000 client addresses every rule misses.
 * 2. Start a stand-in hub (`bench-hub.ts`) serving version 1.
 * 3. Rounds. Each round starts a fresh set of app processes started like production
 *    (`bench-app.ts`: `runDemo`, the production process, plus the benchmark's probes), identical but for the mode (`report.ts` MODES, `MODE_ENV` below):
 *    `off` (the app without the WAF), `enforce` (the WAF as shipped, batched evaluation),
 *    `inline` (enforce, each request evaluated as it arrives) and `deferred` (off, with requests
 *    held to the end of their event-loop turn as batching holds them, nothing evaluated), each
 *    with its own WAF data directory holding version 1 (so an enforcing client evaluates from its
 *    first request), measures them back to back (order rotating), so slow drift and other load on
 *    the machine weigh on all alike, and stops them. Fresh processes per round, because on
 *    the reference machine the same program settles into a fast or a slow mode per process (up to
 *    1.4x apart, stable within the process): one set for all rounds would measure that set's
 *    luck. Each new process gets 5 s of load (BENCH_START_WARMUP) before any is measured.
 *    Then per mode: a warm-up, a saturating wrk run (throughput, loaded latency) and a
 *    one-connection run (latency without queueing). wrk runs in its own process; everything
 *    talks over 127.0.0.1. Headline figures are medians of the per-round ratios and differences
 *    (see `report.ts`).
 * 4. One more enforcing process (BENCH_APP_STAGE=switch), after the same start-up warm-up:
 *    `enforce / deferred` inside one process, its WAF switched at run time between the WAF and
 *    the holding alone (`measureSwitch`), which escapes the per-process modes.
 *    Then the added latency of a lone request on that process (`interleaved-latency.ts`): one
 *    connection alternating request by request between the WAF and no WAF, so that the
 *    machine's state weighs on both alike.
 * 5. Swaps, on that process with the WAF back: under the same saturating load, alternately a
 *    window without a swap (baseline) and one in which the hub publishes the next version: three
 *    rule changes (2, 3, 4) and a data change (5). The app (its `/__bench/*` probes) records its
 *    event-loop stalls with their times (`/__bench/stalls`); the verdict takes the longest one
 *    during the swap, from the poll that fetched the version to 1 s after the client used it
 *    (the client's `lastSwapStartedAt`/`lastSwapAt`), against the same stretch of the baseline
 *    window. The longest stall of each whole window (`/__bench/loop-delay`) is printed too.
 * 6. Print the tables and, last, one JSON line. Every saturated run and window also notes the
 *    host's steal time (`/proc/stat`): on a shared virtual machine it tells a slow phase of the
 *    machine from a slow build.
 *
 * Knobs (development only; published figures use the defaults): BENCH_DURATION=5 (s per
 * saturated run), BENCH_SINGLE_DURATION=3, BENCH_WARMUP=1, BENCH_START_WARMUP=5, BENCH_ROUNDS=6,
 * BENCH_CONNECTIONS=16, BENCH_SWAP_WINDOW=8, BENCH_SWITCH_WINDOWS=8, BENCH_INTERLEAVED_REQUESTS=60000. BENCH_ADDRESS_MEMO=0 turns
 * the client's memo of recent addresses off: the 1000 addresses fit in it, so by default range
 * lookups are mostly remembered, as they are for returning visitors; with 0 every request
 * searches the tables.
 * BENCH_FIELD_MEMO=0 turns the memo of field values off: every request here has the same path,
 * query and user agent, so by default their pattern results are remembered after the first.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type DemoApp, startDemoApp } from '@rampart/test-services/demo-app';
import { runWrk, type WrkResult } from '@rampart/test-services/wrk';
import { installSnapshot } from '../src/test-support/snapshot-dir.ts';
import { changeOf, prepareBenchData } from './bench-data.ts';
import { type BenchHub, startBenchHub } from './bench-hub.ts';
import { runInterleaved } from './interleaved-latency.ts';
import { hostCpuTicks, processCpuMs, stealShare } from './process-cpu.ts';
import {
  formatReport,
  MODES,
  type Mode,
  type ModeRun,
  SWAP_SETTLE_MS,
  type SwapWindow,
  type SwitchWindow,
} from './report.ts';
import { longestStallOverStretch, type Stall, type StallRecording } from './stall-recorder.ts';
import { writeWrkScript } from './wrk.ts';

/** The app the benchmark starts: the production process with the benchmark's additions. */
const BENCH_APP = fileURLToPath(new URL('./bench-app.ts', import.meta.url));
const ROUTE = '/robots.txt';
/** Query string of a typical page view (parsed by the WAF, ignored by the route). */
const QUERY = '?page=2&sort=newest&utm_source=newsletter';

function positiveInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name}: ${JSON.stringify(text)} is not a positive integer`);
  return value;
}

const config = {
  durationS: positiveInt('BENCH_DURATION', 5),
  singleDurationS: positiveInt('BENCH_SINGLE_DURATION', 3),
  warmupS: positiveInt('BENCH_WARMUP', 1),
  startWarmupS: positiveInt('BENCH_START_WARMUP', 5),
  rounds: positiveInt('BENCH_ROUNDS', 6),
  connections: positiveInt('BENCH_CONNECTIONS', 16),
  swapWindowS: positiveInt('BENCH_SWAP_WINDOW', 8),
  switchWindows: positiveInt('BENCH_SWITCH_WINDOWS', 8),
  interleavedRequests: positiveInt('BENCH_INTERLEAVED_REQUESTS', 60_000),
};

const started = performance.now();
function progress(message: string): void {
  process.stderr.write(
    `[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`,
  );
}

async function getJson<T>(url: string, method: 'GET' | 'POST' = 'GET'): Promise<T> {
  const response = await fetch(url, { method, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

interface LoopDelay {
  readonly maxMs: number;
}

interface WafStats {
  readonly snapshotVersion: number | null;
  readonly sync: {
    readonly lastSwapMs: number;
    readonly lastSwapStartedAt: number | null;
    readonly lastSwapAt: number | null;
  };
}

async function waitForVersion(app: DemoApp, version: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let seen: number | null = null;
  while (performance.now() < deadline) {
    seen = (await getJson<WafStats>(`${app.url}/__bench/waf`)).snapshotVersion;
    if (seen === version) return;
    await sleep(100);
  }
  throw new Error(`the enforcing client did not load snapshot version ${version} (has ${seen})`);
}

/** What distinguishes the processes of a round (see {@link Mode}); all else is identical. */
const MODE_ENV: Record<Mode, Record<string, string>> = {
  off: { RAMPART_MODE: 'off' },
  enforce: { RAMPART_MODE: 'enforce' },
  inline: { RAMPART_MODE: 'enforce', RAMPART_EVALUATION: 'inline' },
  deferred: { RAMPART_MODE: 'off', BENCH_APP_STAGE: 'deferred' },
};

/** An app process in `mode`, its data in `root/<name>` (a fresh directory per process). */
async function startApp(
  mode: Mode,
  name: string,
  root: string,
  hub: BenchHub,
  snapshot: string,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<DemoApp> {
  const dataDir = join(root, name);
  const wafDir = join(dataDir, 'rampart');
  await installSnapshot(wafDir, snapshot, 1, hub.siteKey);
  // Identical for all processes but for MODE_ENV.
  return startDemoApp({
    main: BENCH_APP,
    dataDir,
    env: {
      NODE_ENV: 'production',
      ...MODE_ENV[mode],
      ...extraEnv,
      RAMPART_HUB_URL: hub.url,
      RAMPART_SITE_KEY: hub.siteKey,
      RAMPART_DATA_DIR: wafDir,
      // wrk sends the client address in X-Forwarded-For from 127.0.0.1 (a load balancer's role).
      RAMPART_TRUSTED_PROXIES: '127.0.0.1',
      // Poll every second so the swap starts promptly once the hub publishes version 2.
      RAMPART_SYNC_INTERVAL_MS: '1000',
      // BENCH_ADDRESS_MEMO=0: every request searches the range tables (no address remembered).
      ...(process.env.BENCH_ADDRESS_MEMO
        ? { RAMPART_ADDRESS_MEMO: process.env.BENCH_ADDRESS_MEMO }
        : {}),
      // BENCH_FIELD_MEMO=0: every request normalises and compares its fields (nothing remembered).
      ...(process.env.BENCH_FIELD_MEMO ? { RAMPART_FIELD_MEMO: process.env.BENCH_FIELD_MEMO } : {}),
    },
  });
}

/** Load on a freshly started app, so that it is compiled and warm when measured. */
async function warmUp(app: DemoApp, mode: Mode, round: number, script: string): Promise<void> {
  const what = round > 0 ? `round ${round}, ${mode}` : `one process, ${mode}`;
  progress(`${what}: start-up warm-up ${config.startWarmupS} s`);
  await loadRoute(app, script, config.startWarmupS);
}

/** wrk against the benchmarked route of `app`: one thread, `connections` (default the knob). */
function loadRoute(
  app: DemoApp,
  script: string,
  durationS: number,
  connections = config.connections,
): Promise<WrkResult> {
  return runWrk({ url: `${app.url}${ROUTE}${QUERY}`, connections, threads: 1, durationS, script });
}

/**
 * A saturating run of `durationS` and the app's CPU time per request during it (all threads;
 * null where `/proc` cannot be read).
 */
async function saturatedWithCpu(
  app: DemoApp,
  script: string,
): Promise<{ load: WrkResult; cpuUsPerRequest: number | null; hostSteal: number | null }> {
  const cpuBefore = processCpuMs(app.pid ?? -1);
  const hostBefore = hostCpuTicks();
  const load = await loadRoute(app, script, config.durationS);
  const cpuAfter = processCpuMs(app.pid ?? -1);
  const hostSteal = stealShare(hostBefore, hostCpuTicks());
  const cpuUsPerRequest =
    cpuBefore === null || cpuAfter === null || load.requests === 0
      ? null
      : ((cpuAfter - cpuBefore) * 1000) / load.requests;
  return { load, cpuUsPerRequest, hostSteal };
}

/** Sends the in-process comparison's requests through the WAF, or through the holding alone. */
async function switchWaf(app: DemoApp, to: SwitchWindow['variant']): Promise<void> {
  const switched = await fetch(`${app.url}/__bench/waf-switch?to=${to}`, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  if (!switched.ok) throw new Error(`switching to ${to}: HTTP ${switched.status}`);
}

async function measureMode(
  app: DemoApp,
  mode: Mode,
  round: number,
  script: string,
): Promise<ModeRun> {
  progress(`round ${round}, ${mode}: warm-up ${config.warmupS} s`);
  await loadRoute(app, script, config.warmupS);
  progress(`round ${round}, ${mode}: ${config.connections} connections x ${config.durationS} s`);
  const { load: saturated, cpuUsPerRequest, hostSteal } = await saturatedWithCpu(app, script);
  progress(`round ${round}, ${mode}: 1 connection x ${config.singleDurationS} s`);
  const single = await loadRoute(app, script, config.singleDurationS, 1);
  return { mode, round, saturated, single, cpuUsPerRequest, hostSteal };
}

/**
 * The WAF against the holding alone inside one enforcing process (BENCH_APP_STAGE=switch): saturated
 * windows in the order waf, deferred, deferred, waf, ... (each pair holds one of each, and
 * neither always goes first), each after 1 s of load in its setting.
 */
async function measureSwitch(app: DemoApp, script: string): Promise<SwitchWindow[]> {
  const windows: SwitchWindow[] = [];
  for (let k = 0; k < config.switchWindows; k++) {
    const variant = k % 4 === 0 || k % 4 === 3 ? 'waf' : 'deferred';
    await switchWaf(app, variant);
    progress(`one process: window ${k + 1}/${config.switchWindows}, ${variant}`);
    await loadRoute(app, script, 1);
    const { load, cpuUsPerRequest, hostSteal } = await saturatedWithCpu(app, script);
    windows.push({ variant, rps: load.rps, cpuUsPerRequest, hostSteal, errors: load.errors });
  }
  await switchWaf(app, 'waf');
  return windows;
}

interface LoadWindow {
  readonly maxStallMs: number;
  readonly errors: number;
  /** When the load began, epoch ms. */
  readonly startedAt: number;
  /** The app's event-loop stalls during the window, with their end times. */
  readonly stalls: readonly Stall[];
  /** Share of the machine's CPU time stolen by the hypervisor during the window. */
  readonly hostSteal: number | null;
}

/** One saturated window on the enforcing app; `during` runs while wrk does. */
async function loadWindow(
  app: DemoApp,
  script: string,
  during: () => Promise<void>,
): Promise<LoadWindow> {
  await getJson<LoopDelay>(`${app.url}/__bench/loop-delay?reset=1`);
  await getJson<StallRecording>(`${app.url}/__bench/stalls/start`, 'POST');
  const startedAt = Date.now();
  const hostBefore = hostCpuTicks();
  const load = loadRoute(app, script, config.swapWindowS);
  await during();
  const result = await load;
  const hostSteal = stealShare(hostBefore, hostCpuTicks());
  const delay = await getJson<LoopDelay>(`${app.url}/__bench/loop-delay?reset=1`);
  const recording = await getJson<StallRecording>(`${app.url}/__bench/stalls/stop`, 'POST');
  if (recording.truncated) throw new Error('the app recorded more stalls than it keeps');
  return {
    maxStallMs: delay.maxMs,
    errors: result.errors,
    startedAt,
    stalls: recording.stalls,
    hostSteal,
  };
}

/**
 * Per version after the first: a window of load without a swap (baseline), then a window in
 * which the hub publishes the version, 2 s in; the client polls every second.
 *
 * Besides each window's longest stall, the longest stall during the swap itself: from the start
 * of the poll that fetched the version to {@link SWAP_SETTLE_MS} after the client used it (the
 * times the client reports), and in the baseline window before it, the longest stall over the
 * same stretch of the window. A whole window also holds seconds of load before and after the
 * swap, whose collections and host pauses say nothing about the swap.
 */
async function measureSwaps(
  app: DemoApp,
  hub: BenchHub,
  versions: number,
  script: string,
): Promise<SwapWindow[]> {
  const windows: SwapWindow[] = [];
  for (let index = 1; index < versions; index++) {
    const version = index + 1;
    progress(`swap ${index}: baseline window, ${config.swapWindowS} s of load`);
    const baseline = await loadWindow(app, script, async () => {});
    progress(`swap ${index}: window with version ${version} published 2 s in`);
    let swapSeconds: number | null = null;
    const swap = await loadWindow(app, script, async () => {
      await sleep(2000);
      await hub.publish(version);
      const published = performance.now();
      const deadline = published + (config.swapWindowS - 3) * 1000;
      while (performance.now() < deadline) {
        const stats = await getJson<WafStats>(`${app.url}/__bench/waf`);
        if (stats.snapshotVersion === version) {
          swapSeconds = (performance.now() - published) / 1000;
          return;
        }
        await sleep(100);
      }
    });
    const stats = await getJson<WafStats>(`${app.url}/__bench/waf`);
    const swapped = stats.snapshotVersion === version;
    const { lastSwapStartedAt: from, lastSwapAt: at } = stats.sync;
    // The swap's stretch in its window, and the same stretch of the baseline window.
    const during = (w: LoadWindow) =>
      swapped && from !== null && at !== null
        ? longestStallOverStretch(w, swap, from, at + SWAP_SETTLE_MS)
        : null;
    windows.push(
      {
        version: null,
        change: null,
        maxStallMs: baseline.maxStallMs,
        duringStallMs: during(baseline),
        hostSteal: baseline.hostSteal,
        swapSeconds: null,
        evaluatorBuildMs: null,
        versionAfter: null,
        errors: baseline.errors,
      },
      {
        version,
        change: changeOf(version),
        maxStallMs: swap.maxStallMs,
        duringStallMs: during(swap),
        hostSteal: swap.hostSteal,
        swapSeconds,
        evaluatorBuildMs: swapped ? stats.sync.lastSwapMs : null,
        versionAfter: stats.snapshotVersion,
        errors: swap.errors,
      },
    );
  }
  return windows;
}

/** Stops the running app processes and forgets them. */
async function stopApps(apps: Partial<Record<Mode, DemoApp>>): Promise<void> {
  const running = Object.values(apps);
  for (const mode of Object.keys(apps) as Mode[]) delete apps[mode];
  await Promise.all(running.map((app) => app?.close()));
}

async function main(): Promise<void> {
  const data = await prepareBenchData(progress);
  const root = mkdtempSync(join(tmpdir(), 'rampart-bench-middleware-'));
  const hub = await startBenchHub(`rk_bench_${randomBytes(16).toString('hex')}`, data.snapshots);
  const apps: Partial<Record<Mode, DemoApp>> = {};
  try {
    const first = data.snapshots[0] as string;
    await hub.publish(1);
    const script = writeWrkScript(root, `${ROUTE}${QUERY}`, data.ips);
    const runs: ModeRun[] = [];
    for (let round = 1; round <= config.rounds; round++) {
      progress(`round ${round}: starting the app ${MODES.length} times (${MODES.join(', ')})`);
      for (const mode of MODES) {
        const app = await startApp(mode, `${mode}-${round}`, root, hub, first);
        apps[mode] = app;
        if (MODE_ENV[mode].RAMPART_MODE === 'enforce') await waitForVersion(app, 1, 30_000);
      }
      // Every fresh process gets the same load before any is measured: measured right after
      // its start, the first of a round was still compiling (the enforcing app has more to
      // compile, and 1000 addresses to meet), which biased rounds by their order.
      for (const mode of MODES) await warmUp(apps[mode] as DemoApp, mode, round, script);
      // Each mode takes each place in the order in turn, so none is always measured first.
      const shift = (round - 1) % MODES.length;
      const order = [...MODES.slice(shift), ...MODES.slice(0, shift)];
      for (const mode of order)
        runs.push(await measureMode(apps[mode] as DemoApp, mode, round, script));
      await stopApps(apps);
    }
    progress('one process: starting the app with RAMPART_MODE=enforce and the WAF switch');
    apps.enforce = await startApp('enforce', 'enforce-one', root, hub, first, {
      BENCH_APP_STAGE: 'switch',
    });
    await waitForVersion(apps.enforce, 1, 30_000);
    // As in the rounds: a process measured right after its start is still compiling, which
    // showed as a 36-39 ms stall in the first baseline window.
    await warmUp(apps.enforce, 'enforce', 0, script);
    const switchWindows = await measureSwitch(apps.enforce, script);
    progress(
      `one process: ${config.interleavedRequests} requests on 1 connection, WAF and not in turn`,
    );
    const interleaved = await runInterleaved({
      url: apps.enforce.url,
      path: `${ROUTE}${QUERY}`,
      ips: data.ips,
      requests: config.interleavedRequests,
      warmup: 2000,
      dir: root,
    });
    // The same process, the WAF back in place, for the swaps.
    const swaps = await measureSwaps(apps.enforce, hub, data.snapshots.length, script);
    process.stdout.write(
      `${formatReport({
        route: ROUTE,
        rangeCount: data.rangeCount,
        ruleCount: data.ruleCount,
        ruleTypes: data.ruleTypes,
        addresses: data.ips.length,
        connections: config.connections,
        durationS: config.durationS,
        singleDurationS: config.singleDurationS,
        runs,
        switchWindows,
        interleaved,
        swaps,
      })}\n`,
    );
  } finally {
    await stopApps(apps);
    await hub.close();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:middleware failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
