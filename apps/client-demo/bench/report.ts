/**
 * The figures of `npm run bench:middleware` from its raw runs, and their printed form. Pure
 * functions (tested in `report.test.ts`).
 *
 * Each round measures every variant back to back (order rotating), so a round is a matched set:
 * whatever else the machine was doing then weighed on all of them. Headline figures are the
 * median over rounds of the per-round ratio or difference, which a single disturbed round
 * cannot move much; pooled figures are printed too.
 */

import type { WrkResult } from '@rampart/test-services/wrk';
import type { InterleavedResult } from './interleaved-latency.ts';

export const TARGETS = {
  throughputRatio: 0.95,
  addedP99Ms: 0.2,
  swapStallMs: 20,
} as const;

/**
 * How long after a swap its stalls still count: the replaced snapshot is closed and its tables
 * become garbage, and a data change's new tables can prompt a full collection, shortly after.
 */
export const SWAP_SETTLE_MS = 1000;

/**
 * Host steal below which a run counts as quiet. Comparisons of two runs are also given over the
 * pairs where both were quiet: on a shared machine those are the ones the host did not skew.
 */
export const QUIET_STEAL = 0.03;

/**
 * What runs in front of the route:
 * - `off`: the WAF middleware with `RAMPART_MODE=off` (the app "without the WAF");
 * - `enforce`: the WAF as shipped (`enforce`, batched evaluation);
 * - `inline`: `enforce` with `RAMPART_EVALUATION=inline`, each request evaluated as it arrives;
 * - `deferred`: `off`, plus the demo's stand-in for the batching alone
 *   (BENCH_APP_STAGE=deferred): requests wait for the end of their turn, nothing is evaluated.
 */
export type Mode = 'off' | 'enforce' | 'inline' | 'deferred';

export const MODES: readonly Mode[] = ['off', 'enforce', 'inline', 'deferred'];

export interface ModeRun {
  readonly mode: Mode;
  readonly round: number;
  /** Saturating load (many connections): throughput, and latency under full load. */
  readonly saturated: WrkResult;
  /** One connection: the latency of a request when nothing queues. */
  readonly single: WrkResult;
  /**
   * CPU time of the app process (all threads) per request during the saturated run, us; null
   * where `/proc` is not readable. Unlike req/s it does not depend on how busy wrk kept the app.
   */
  readonly cpuUsPerRequest: number | null;
  /**
   * Share of the machine's CPU time the hypervisor gave to other guests during the saturated run
   * (null where `/proc/stat` is not readable): the machine's state, beside the figures it moves.
   */
  readonly hostSteal: number | null;
}

export interface SwapWindow {
  /** The version published in the window (null: a baseline window without a swap). */
  readonly version: number | null;
  /** What that version changed (null for a baseline window). */
  readonly change: 'rules' | 'data' | null;
  /** Longest event-loop stall in the window, ms. */
  readonly maxStallMs: number;
  /**
   * Longest stall during the swap (from the poll that fetched the version to
   * {@link SWAP_SETTLE_MS} after its use); for a baseline window, over the same stretch of the
   * window. Null when the swap did not complete.
   */
  readonly duringStallMs: number | null;
  /** See {@link ModeRun.hostSteal}. */
  readonly hostSteal: number | null;
  /** Publication to the client using the version (poll, download, verify, open, swap), s. */
  readonly swapSeconds: number | null;
  /** The synchronous part of the swap (building the evaluator), as the client reports it. */
  readonly evaluatorBuildMs: number | null;
  /** The version in use at the end of the window. */
  readonly versionAfter: number | null;
  readonly errors: number;
}

/** A saturated window of the in-process comparison (one enforcing process, WAF switched). */
export interface SwitchWindow {
  readonly variant: 'waf' | 'deferred';
  readonly rps: number;
  readonly cpuUsPerRequest: number | null;
  /** See {@link ModeRun.hostSteal}. */
  readonly hostSteal: number | null;
  readonly errors: number;
}

export interface BenchInput {
  readonly route: string;
  readonly rangeCount: number;
  readonly ruleCount: number;
  readonly ruleTypes: readonly string[];
  readonly addresses: number;
  readonly connections: number;
  readonly durationS: number;
  readonly singleDurationS: number;
  readonly runs: readonly ModeRun[];
  /** The in-process comparison's windows, in order (empty: not measured). */
  readonly switchWindows: readonly SwitchWindow[];
  /** The interleaved one-connection run on the same process (null: not measured). */
  readonly interleaved: InterleavedResult | null;
  readonly swaps: readonly SwapWindow[];
}

/** Consecutive windows in pairs (0-1, 2-3, ...) that hold one `waf` and one `deferred` each. */
function switchPairs(windows: readonly SwitchWindow[]): [SwitchWindow, SwitchWindow][] {
  const pairs: [SwitchWindow, SwitchWindow][] = [];
  for (let k = 0; k + 1 < windows.length; k += 2) {
    const pair = [windows[k], windows[k + 1]] as SwitchWindow[];
    const waf = pair.find((w) => w.variant === 'waf');
    const deferred = pair.find((w) => w.variant === 'deferred');
    if (waf && deferred) pairs.push([waf, deferred]);
  }
  return pairs;
}

/** The median over {@link switchPairs} of `figure(waf, deferred)`. */
function switchRatio(
  windows: readonly SwitchWindow[],
  figure: (waf: SwitchWindow, deferred: SwitchWindow) => number,
): number {
  return medianOfKnown(switchPairs(windows).map(([waf, deferred]) => figure(waf, deferred)));
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The runs of one round, by mode. */
type Round = Partial<Record<Mode, ModeRun>>;

function rounds(runs: readonly ModeRun[]): Round[] {
  const byRound = new Map<number, Round>();
  for (const run of runs) {
    const round = byRound.get(run.round) ?? {};
    round[run.mode] = run;
    byRound.set(run.round, round);
  }
  return [...byRound.keys()].sort((a, b) => a - b).map((k) => byRound.get(k) as Round);
}

/** Median over the rounds that ran both `a` and `b` of `figure(a run, b run)` (NaN: skipped). */
function perRound(
  all: readonly Round[],
  a: Mode,
  b: Mode,
  figure: (x: ModeRun, y: ModeRun) => number,
): number {
  const values: number[] = [];
  for (const round of all) {
    const x = round[a];
    const y = round[b];
    if (x && y) values.push(figure(x, y));
  }
  return medianOfKnown(values);
}

/** The median of the values that are not NaN (a figure a run could not measure), rounded. */
function medianOfKnown(values: readonly number[]): number {
  return round3(median(values.filter((v) => !Number.isNaN(v))));
}

const rpsRatio = (x: ModeRun, y: ModeRun) => x.saturated.rps / y.saturated.rps;

const isQuiet = (run: { readonly hostSteal: number | null }) =>
  run.hostSteal !== null && run.hostSteal < QUIET_STEAL;

/** `figure` where both runs were quiet, NaN (left out of medians) where either was not. */
const quiet =
  <T extends { readonly hostSteal: number | null }>(figure: (x: T, y: T) => number) =>
  (x: T, y: T) =>
    isQuiet(x) && isQuiet(y) ? figure(x, y) : Number.NaN;

/** How many of the rounds that ran both `a` and `b` had both quiet. */
function quietRounds(all: readonly Round[], a: Mode, b: Mode): number {
  return all.filter((r) => r[a] && r[b] && isQuiet(r[a]) && isQuiet(r[b])).length;
}

/** How many of the in-process pairs ({@link switchPairs}) had both windows quiet. */
function quietPairs(windows: readonly SwitchWindow[]): number {
  return switchPairs(windows).filter(([waf, deferred]) => isQuiet(waf) && isQuiet(deferred)).length;
}
/** What `x` adds to `y`'s latency percentile `figure` in its `load` run, ms. */
const added =
  (load: 'single' | 'saturated', figure: 'p50Ms' | 'p99Ms') => (x: ModeRun, y: ModeRun) =>
    x[load][figure] - y[load][figure];
/** `x`'s throughput relative to `y`'s if both were limited by CPU alone: y's CPU / x's. */
const cpuRatio = (
  x: { readonly cpuUsPerRequest: number | null },
  y: { readonly cpuUsPerRequest: number | null },
) => (x.cpuUsPerRequest && y.cpuUsPerRequest ? y.cpuUsPerRequest / x.cpuUsPerRequest : Number.NaN);

/** Median CPU us per request of `mode`'s runs that have it. */
function medianCpu(runs: readonly ModeRun[], mode: Mode): number {
  return medianOfKnown(
    runs.filter((r) => r.mode === mode).map((r) => r.cpuUsPerRequest ?? Number.NaN),
  );
}

function pooledRps(runs: readonly ModeRun[], mode: Mode): number {
  const mine = runs.filter((r) => r.mode === mode);
  const requests = mine.reduce((n, r) => n + r.saturated.requests, 0);
  const seconds = mine.reduce((n, r) => n + r.saturated.durationS, 0);
  return seconds > 0 ? requests / seconds : Number.NaN;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The WAF's requests' percentile minus the others' in the interleaved run (NaN: none). */
function interleavedAdded(run: InterleavedResult | null, figure: 'p50Ms' | 'p99Ms'): number {
  return run ? round3(run.waf[figure] - run.deferred[figure]) : Number.NaN;
}

function ofChange(windows: readonly SwapWindow[], change: 'rules' | 'data'): SwapWindow[] {
  return windows.filter((w) => w.change === change);
}

/** Steal shares of every saturated run and window that has one. */
function steals(input: BenchInput): number[] {
  return [...input.runs, ...input.switchWindows, ...input.swaps].flatMap((w) =>
    w.hostSteal === null ? [] : [w.hostSteal],
  );
}

/** A steal share as a percentage for the tables ('-' when unknown). */
function percent(share: number | null): string {
  return share === null ? '-' : `${(share * 100).toFixed(1)}`;
}

/** The windows' stalls during the swap (or its stretch), leaving out swaps that did not happen. */
function during(windows: readonly SwapWindow[]): number[] {
  return windows.flatMap((w) => (w.duringStallMs === null ? [] : [w.duringStallMs]));
}

export function summarize(input: BenchInput) {
  const all = rounds(input.runs);
  const hostSteals = steals(input);
  const swaps = input.swaps.filter((w) => w.version !== null);
  const baselines = input.swaps.filter((w) => w.version === null);
  const errors =
    input.runs.reduce((n, r) => n + r.saturated.errors + r.single.errors, 0) +
    input.switchWindows.reduce((n, w) => n + w.errors, 0) +
    (input.interleaved?.errors ?? 0) +
    input.swaps.reduce((n, w) => n + w.errors, 0);
  return {
    route: input.route,
    ranges: input.rangeCount,
    rules: input.ruleCount,
    rounds: all.filter((r) => r.off && r.enforce).length,
    rps_off: Math.round(pooledRps(input.runs, 'off')),
    rps_enforce: Math.round(pooledRps(input.runs, 'enforce')),
    rps_inline: Math.round(pooledRps(input.runs, 'inline')),
    rps_deferred: Math.round(pooledRps(input.runs, 'deferred')),
    throughput_ratio: perRound(all, 'enforce', 'off', rpsRatio),
    throughput_ratio_inline: perRound(all, 'inline', 'off', rpsRatio),
    throughput_ratio_vs_deferred: perRound(all, 'enforce', 'deferred', rpsRatio),
    deferral_gain: perRound(all, 'deferred', 'off', rpsRatio),
    cpu_us_per_request_off: medianCpu(input.runs, 'off'),
    cpu_us_per_request_enforce: medianCpu(input.runs, 'enforce'),
    cpu_us_per_request_inline: medianCpu(input.runs, 'inline'),
    cpu_us_per_request_deferred: medianCpu(input.runs, 'deferred'),
    cpu_ratio: perRound(all, 'enforce', 'off', cpuRatio),
    cpu_ratio_inline: perRound(all, 'inline', 'off', cpuRatio),
    cpu_ratio_vs_deferred: perRound(all, 'enforce', 'deferred', cpuRatio),
    in_process_ratio_vs_deferred: switchRatio(input.switchWindows, (w, d) => w.rps / d.rps),
    in_process_cpu_ratio_vs_deferred: switchRatio(input.switchWindows, cpuRatio),
    // The same comparisons over the pairs of runs the host left alone (see QUIET_STEAL).
    quiet_rounds: quietRounds(all, 'enforce', 'off'),
    throughput_ratio_quiet: perRound(all, 'enforce', 'off', quiet(rpsRatio)),
    quiet_rounds_vs_deferred: quietRounds(all, 'enforce', 'deferred'),
    throughput_ratio_vs_deferred_quiet: perRound(all, 'enforce', 'deferred', quiet(rpsRatio)),
    cpu_ratio_vs_deferred_quiet: perRound(all, 'enforce', 'deferred', quiet<ModeRun>(cpuRatio)),
    quiet_in_process_pairs: quietPairs(input.switchWindows),
    in_process_cpu_ratio_vs_deferred_quiet: switchRatio(
      input.switchWindows,
      quiet<SwitchWindow>(cpuRatio),
    ),
    // The headline: the interleaved run (one process, the same moments for both settings).
    added_p50_ms: interleavedAdded(input.interleaved, 'p50Ms'),
    added_p99_ms: interleavedAdded(input.interleaved, 'p99Ms'),
    // The rounds' one-connection runs: separate processes, whose own p99 differ by about this much.
    added_p50_ms_across_processes: perRound(all, 'enforce', 'off', added('single', 'p50Ms')),
    added_p99_ms_across_processes: perRound(all, 'enforce', 'off', added('single', 'p99Ms')),
    added_p99_ms_inline_across_processes: perRound(all, 'inline', 'off', added('single', 'p99Ms')),
    added_p50_ms_saturated: perRound(all, 'enforce', 'off', added('saturated', 'p50Ms')),
    added_p99_ms_saturated: perRound(all, 'enforce', 'off', added('saturated', 'p99Ms')),
    swaps: swaps.length,
    swaps_completed: swaps.filter((w) => w.versionAfter === w.version).length,
    swap_max_stall_ms: round3(median(ofChange(swaps, 'rules').map((w) => w.maxStallMs))),
    swap_data_max_stall_ms: round3(median(ofChange(swaps, 'data').map((w) => w.maxStallMs))),
    swap_worst_stall_ms: round3(Math.max(...swaps.map((w) => w.maxStallMs))),
    baseline_max_stall_ms: round3(median(baselines.map((w) => w.maxStallMs))),
    // The verdicts': the stalls during the swaps themselves (see SwapWindow.duringStallMs).
    during_swap_stall_ms: round3(median(during(ofChange(swaps, 'rules')))),
    during_swap_data_stall_ms: round3(median(during(ofChange(swaps, 'data')))),
    during_swap_worst_stall_ms: round3(Math.max(...during(swaps))),
    during_baseline_stall_ms: round3(median(during(baselines))),
    swap_seconds: round3(median(swaps.map((w) => w.swapSeconds ?? Number.NaN))),
    evaluator_build_ms: round3(median(swaps.map((w) => w.evaluatorBuildMs ?? Number.NaN))),
    // The machine's state: the share of CPU time the hypervisor gave to other guests.
    host_steal_median: round3(median(hostSteals)),
    host_steal_max: round3(Math.max(...hostSteals)),
    errors,
  };
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : `${' '.repeat(width - text.length)}${text}`;
}

function verdict(ok: boolean): string {
  return ok ? 'meets target' : 'MISSES target';
}

function table(header: string[], widths: number[], rows: string[][]): string[] {
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] as number)).join(' ');
  return [line(header), ...rows.map(line)];
}

export function formatReport(input: BenchInput): string {
  const s = summarize(input);
  const lines: string[] = [];
  lines.push(
    `bench:middleware: GET ${input.route} with the WAF off vs enforce, batched and inline (${input.rangeCount.toLocaleString('en-US')} ranges, ${input.ruleCount} rules of types ${input.ruleTypes.join(', ')}; ${input.addresses} client addresses that every rule misses)`,
  );
  lines.push(
    `load: wrk from a second process on 127.0.0.1; saturated = ${input.connections} connections x ${input.durationS} s, single = 1 connection x ${input.singleDurationS} s; ${s.rounds} rounds, each on fresh processes, modes back to back, order rotating`,
  );
  lines.push(
    'modes: off = RAMPART_MODE=off; enforce = as shipped (batched evaluation); inline = enforce with RAMPART_EVALUATION=inline; deferred = off, requests held to the end of their turn as batching does (nothing evaluated)',
  );
  lines.push('');
  lines.push(
    ...table(
      [
        'mode',
        'round',
        'req/s',
        'sat p50 ms',
        'sat p99 ms',
        '1-conn p50 ms',
        '1-conn p99 ms',
        'cpu us/req',
        'steal %',
        'errors',
      ],
      [9, 6, 9, 11, 11, 14, 14, 11, 8, 7],
      input.runs.map((r) => [
        r.mode,
        String(r.round),
        r.saturated.rps.toFixed(0),
        r.saturated.p50Ms.toFixed(3),
        r.saturated.p99Ms.toFixed(3),
        r.single.p50Ms.toFixed(3),
        r.single.p99Ms.toFixed(3),
        r.cpuUsPerRequest === null ? '-' : r.cpuUsPerRequest.toFixed(1),
        percent(r.hostSteal),
        String(r.saturated.errors + r.single.errors),
      ]),
    ),
  );
  lines.push(
    `host steal (CPU time the hypervisor gave to other guests; it slows everything here alike) over all saturated runs and windows: median ${percent(s.host_steal_median)}%, up to ${percent(s.host_steal_max)}%`,
  );
  lines.push('');
  lines.push(
    `throughput ratio (enforce / off, median of rounds): ${s.throughput_ratio.toFixed(3)} (pooled: ${s.rps_enforce} vs ${s.rps_off} req/s; target >= ${TARGETS.throughputRatio}: ${verdict(s.throughput_ratio >= TARGETS.throughputRatio)})`,
  );
  lines.push(
    `  inline evaluation / off: ${s.throughput_ratio_inline.toFixed(3)} (pooled ${s.rps_inline} req/s); enforce / deferred (the evaluation's own cost, same scheduling): ${s.throughput_ratio_vs_deferred.toFixed(3)}; deferred / off (the deferral alone): ${s.deferral_gain.toFixed(3)}`,
  );
  lines.push(
    `CPU per request, all threads (median): off ${s.cpu_us_per_request_off.toFixed(1)}, enforce ${s.cpu_us_per_request_enforce.toFixed(1)}, inline ${s.cpu_us_per_request_inline.toFixed(1)}, deferred ${s.cpu_us_per_request_deferred.toFixed(1)} us; as throughput ratios if CPU alone decided (median of rounds): enforce / off ${s.cpu_ratio.toFixed(3)}, inline / off ${s.cpu_ratio_inline.toFixed(3)}, enforce / deferred ${s.cpu_ratio_vs_deferred.toFixed(3)}`,
  );
  const quietFigure = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(3));
  lines.push(
    `only where the host stole under ${QUIET_STEAL * 100}% from both: enforce / off ${quietFigure(s.throughput_ratio_quiet)} (${s.quiet_rounds} rounds); enforce / deferred ${quietFigure(s.throughput_ratio_vs_deferred_quiet)}, by CPU ${quietFigure(s.cpu_ratio_vs_deferred_quiet)} (${s.quiet_rounds_vs_deferred} rounds); in one process by CPU ${quietFigure(s.in_process_cpu_ratio_vs_deferred_quiet)} (${s.quiet_in_process_pairs} pairs)`,
  );
  if (input.switchWindows.length > 0) {
    lines.push(
      `one enforcing process, the WAF switched with the holding alone (${input.switchWindows.length} windows of ${input.durationS} s): ${input.switchWindows.map((w) => `${w.variant} ${w.rps.toFixed(0)} req/s${w.cpuUsPerRequest === null ? '' : ` ${w.cpuUsPerRequest.toFixed(1)} us`}${w.hostSteal === null ? '' : ` (steal ${percent(w.hostSteal)}%)`}`).join(', ')}`,
    );
    lines.push(
      `  waf / deferred in one process (median of pairs): ${s.in_process_ratio_vs_deferred.toFixed(3)} req/s, ${s.in_process_cpu_ratio_vs_deferred.toFixed(3)} by CPU per request`,
    );
  }
  const interleaved = input.interleaved;
  if (interleaved) {
    lines.push(
      `added latency of a lone request in one process, the WAF and no WAF in turn on 1 connection (${interleaved.requests} requests, ${interleaved.durationS.toFixed(1)} s): p50 ${s.added_p50_ms.toFixed(3)} ms, p99 ${s.added_p99_ms.toFixed(3)} ms (target p99 <= ${TARGETS.addedP99Ms} ms: ${verdict(s.added_p99_ms <= TARGETS.addedP99Ms)})`,
    );
    lines.push(
      `  waf p50 ${interleaved.waf.p50Ms.toFixed(3)} / p99 ${interleaved.waf.p99Ms.toFixed(3)} ms, no WAF p50 ${interleaved.deferred.p50Ms.toFixed(3)} / p99 ${interleaved.deferred.p99Ms.toFixed(3)} ms; p99 by quarter of the run (waf / no WAF): ${interleaved.quarters.map((q) => `${q.wafP99Ms.toFixed(3)} / ${q.deferredP99Ms.toFixed(3)}`).join(', ')}`,
    );
  }
  lines.push(
    `added latency across processes, 1 connection (enforce - off, median of rounds; two processes of one build differ about as much): p50 ${s.added_p50_ms_across_processes.toFixed(3)} ms, p99 ${s.added_p99_ms_across_processes.toFixed(3)} ms; inline p99 ${s.added_p99_ms_inline_across_processes.toFixed(3)} ms`,
  );
  lines.push(
    `added latency, saturated (includes queueing): p50 ${s.added_p50_ms_saturated.toFixed(3)} ms, p99 ${s.added_p99_ms_saturated.toFixed(3)} ms`,
  );
  lines.push('');
  lines.push(
    ...table(
      [
        'window',
        'version',
        'max stall ms',
        'during swap ms',
        'swap s',
        'evaluator ms',
        'steal %',
        'errors',
      ],
      [12, 8, 13, 15, 8, 13, 8, 7],
      input.swaps.map((w) => [
        w.change === null ? 'baseline' : `${w.change} swap`,
        w.version === null ? '-' : `${w.versionAfter ?? '?'}/${w.version}`,
        w.maxStallMs.toFixed(1),
        w.duringStallMs === null ? '-' : w.duringStallMs.toFixed(1),
        w.swapSeconds === null ? '-' : w.swapSeconds.toFixed(2),
        w.evaluatorBuildMs === null ? '-' : w.evaluatorBuildMs.toFixed(1),
        percent(w.hostSteal),
        String(w.errors),
      ]),
    ),
  );
  const completed = s.swaps_completed === s.swaps;
  const rules = during(ofChange(input.swaps, 'rules')).length;
  lines.push(
    `snapshot swap under saturated load, longest event-loop stall during the swap (from the poll that fetched it to ${SWAP_SETTLE_MS / 1000} s after its use; target < ${TARGETS.swapStallMs} ms); the same stretch without a swap: ${s.during_baseline_stall_ms.toFixed(1)} ms`,
  );
  lines.push(
    `  rule change (range tables kept): ${s.during_swap_stall_ms.toFixed(1)} ms, median of ${rules} swaps: ${verdict(s.during_swap_stall_ms < TARGETS.swapStallMs && completed)}`,
  );
  lines.push(
    `  data change (a range table loaded anew): ${s.during_swap_data_stall_ms.toFixed(1)} ms: ${verdict(s.during_swap_data_stall_ms < TARGETS.swapStallMs && completed)}`,
  );
  lines.push(`  worst of all ${s.swaps} swaps: ${s.during_swap_worst_stall_ms.toFixed(1)} ms`);
  lines.push(
    `  whole windows: rule change ${s.swap_max_stall_ms.toFixed(1)} ms (median), data change ${s.swap_data_max_stall_ms.toFixed(1)} ms, worst ${s.swap_worst_stall_ms.toFixed(1)} ms; without a swap ${s.baseline_max_stall_ms.toFixed(1)} ms (median)`,
  );
  if (s.swaps_completed < s.swaps)
    lines.push(
      `  WARNING: ${s.swaps - s.swaps_completed} swap(s) did not complete within the window`,
    );
  if (s.errors > 0) lines.push(`  WARNING: ${s.errors} failed requests (socket errors or non-2xx)`);
  lines.push(JSON.stringify(s));
  return lines.join('\n');
}
