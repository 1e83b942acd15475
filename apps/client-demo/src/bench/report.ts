/**
 * The figures of `npm run bench:middleware` from its raw runs, and their printed form. Pure
 * functions (tested in `report.test.ts`).
 */
import type { WrkResult } from './wrk.js';

export const TARGETS = {
  throughputRatio: 0.95,
  addedP99Ms: 0.2,
  swapStallMs: 20,
} as const;

export type Mode = 'off' | 'enforce';

export interface ModeRun {
  readonly mode: Mode;
  readonly round: number;
  /** Saturating load (many connections): throughput, and latency under full load. */
  readonly saturated: WrkResult;
  /** One connection: the latency of a request when nothing queues. */
  readonly single: WrkResult;
}

export interface SwapMeasurement {
  /** Longest event-loop stall in the same load window without a swap. */
  readonly baselineMaxStallMs: number;
  /** Longest event-loop stall in the window holding the swap. */
  readonly swapMaxStallMs: number;
  /** From publishing version 2 to the client using it (poll, download, verify, open, swap). */
  readonly swapSeconds: number;
  /** The synchronous part of the swap (building the evaluator), as the client reports it. */
  readonly evaluatorBuildMs: number | null;
  /** The snapshot version in use after the window (2 when the swap happened). */
  readonly versionAfter: number | null;
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
  readonly swap: SwapMeasurement;
}

export interface ModeSummary {
  readonly rps: number;
  readonly saturatedP50Ms: number;
  readonly saturatedP99Ms: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

const average = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;

/** Throughput over all rounds of a mode (total requests / total time); latencies averaged over rounds. */
export function summarizeMode(runs: readonly ModeRun[], mode: Mode): ModeSummary {
  const mine = runs.filter((r) => r.mode === mode);
  const requests = mine.reduce((n, r) => n + r.saturated.requests, 0);
  const seconds = mine.reduce((n, r) => n + r.saturated.durationS, 0);
  return {
    rps: seconds > 0 ? requests / seconds : Number.NaN,
    saturatedP50Ms: average(mine.map((r) => r.saturated.p50Ms)),
    saturatedP99Ms: average(mine.map((r) => r.saturated.p99Ms)),
    p50Ms: average(mine.map((r) => r.single.p50Ms)),
    p99Ms: average(mine.map((r) => r.single.p99Ms)),
    errors: mine.reduce((n, r) => n + r.saturated.errors + r.single.errors, 0),
  };
}

export function summarize(input: BenchInput) {
  const off = summarizeMode(input.runs, 'off');
  const enforce = summarizeMode(input.runs, 'enforce');
  const round3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    route: input.route,
    ranges: input.rangeCount,
    rules: input.ruleCount,
    rps_off: Math.round(off.rps),
    rps_enforce: Math.round(enforce.rps),
    throughput_ratio: round3(enforce.rps / off.rps),
    added_p50_ms: round3(enforce.p50Ms - off.p50Ms),
    added_p99_ms: round3(enforce.p99Ms - off.p99Ms),
    added_p50_ms_saturated: round3(enforce.saturatedP50Ms - off.saturatedP50Ms),
    added_p99_ms_saturated: round3(enforce.saturatedP99Ms - off.saturatedP99Ms),
    swap_max_stall_ms: round3(input.swap.swapMaxStallMs),
    baseline_max_stall_ms: round3(input.swap.baselineMaxStallMs),
    swap_seconds: round3(input.swap.swapSeconds),
    swapped: input.swap.versionAfter === 2,
    errors: off.errors + enforce.errors + input.swap.errors,
  };
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : `${' '.repeat(width - text.length)}${text}`;
}

function verdict(ok: boolean): string {
  return ok ? 'meets target' : 'MISSES target';
}

export function formatReport(input: BenchInput): string {
  const s = summarize(input);
  const lines: string[] = [];
  lines.push(
    `bench:middleware: GET ${input.route} with the WAF off vs enforce (${input.rangeCount.toLocaleString('en-US')} ranges, ${input.ruleCount} rules of types ${input.ruleTypes.join(', ')}; ${input.addresses} client addresses that every rule misses)`,
  );
  lines.push(
    `load: wrk from a second process on 127.0.0.1; saturated = ${input.connections} connections x ${input.durationS} s, single = 1 connection x ${input.singleDurationS} s; modes alternate per round`,
  );
  lines.push('');
  const header = [
    'mode',
    'round',
    'req/s',
    'sat p50 ms',
    'sat p99 ms',
    '1-conn p50 ms',
    '1-conn p99 ms',
    'errors',
  ];
  const widths = [8, 6, 10, 11, 11, 14, 14, 7];
  const row = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] as number)).join(' ');
  lines.push(row(header));
  for (const r of input.runs) {
    lines.push(
      row([
        r.mode,
        String(r.round),
        r.saturated.rps.toFixed(0),
        r.saturated.p50Ms.toFixed(3),
        r.saturated.p99Ms.toFixed(3),
        r.single.p50Ms.toFixed(3),
        r.single.p99Ms.toFixed(3),
        String(r.saturated.errors + r.single.errors),
      ]),
    );
  }
  lines.push('');
  lines.push(
    `throughput ratio (enforce / off): ${s.throughput_ratio.toFixed(3)} (${s.rps_enforce} vs ${s.rps_off} req/s; target >= ${TARGETS.throughputRatio}: ${verdict(s.throughput_ratio >= TARGETS.throughputRatio)})`,
  );
  lines.push(
    `added latency, 1 connection: p50 ${s.added_p50_ms.toFixed(3)} ms, p99 ${s.added_p99_ms.toFixed(3)} ms (target p99 <= ${TARGETS.addedP99Ms} ms: ${verdict(s.added_p99_ms <= TARGETS.addedP99Ms)})`,
  );
  lines.push(
    `added latency, saturated (includes queueing): p50 ${s.added_p50_ms_saturated.toFixed(3)} ms, p99 ${s.added_p99_ms_saturated.toFixed(3)} ms`,
  );
  const swap = input.swap;
  lines.push(
    `snapshot swap under saturated load: longest event-loop stall ${swap.swapMaxStallMs.toFixed(1)} ms (target < ${TARGETS.swapStallMs} ms: ${verdict(swap.swapMaxStallMs < TARGETS.swapStallMs && s.swapped)}); same load without a swap: ${swap.baselineMaxStallMs.toFixed(1)} ms`,
  );
  lines.push(
    `  version 1 -> ${swap.versionAfter ?? '?'} in ${swap.swapSeconds.toFixed(2)} s from publication (poll, download, verify, open); evaluator build ${swap.evaluatorBuildMs === null ? 'n/a' : `${swap.evaluatorBuildMs.toFixed(1)} ms`}`,
  );
  if (!s.swapped) lines.push('  WARNING: the client did not swap to version 2 during the window');
  if (s.errors > 0) lines.push(`  WARNING: ${s.errors} failed requests (socket errors or non-2xx)`);
  lines.push(JSON.stringify(s));
  return lines.join('\n');
}
