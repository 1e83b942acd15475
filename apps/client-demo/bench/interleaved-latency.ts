/**
 * The added latency of a lone request, measured with both settings interleaved in one process.
 *
 * Comparing the one-connection latency of two processes (or of one process at two times) mixes
 * the WAF's cost with the machine's state: on the reference machine two processes of one build,
 * or two windows of one process, differ at p99 by more than the 0.2 ms target. Here one
 * connection alternates, request by request, between the WAF and the app without it (the
 * `X-Bench-Waf` header, honoured by `WafSwitch` when BENCH_APP_STAGE=switch), in the order
 * waf, deferred, deferred, waf, ... so that each setting follows each equally often. Whatever
 * disturbs the machine meets both settings alike; the difference of their percentiles is the
 * WAF's. A lone request is never held (see the client's TurnBatch), so `deferred` is the app
 * without the WAF here.
 *
 * The load comes from a second process (`interleaved-client.ts`), like wrk's: a minimal HTTP/1.1
 * client on one keep-alive connection, timing each request from its write to the last byte of
 * its response.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoadProcess } from '@rampart/test-services/load-process';

export type Variant = 'waf' | 'deferred';

/** Request `k`'s variant: waf, deferred, deferred, waf, repeating (each follows each alike). */
export function variantOf(k: number): Variant {
  const r = k % 4;
  return r === 0 || r === 3 ? 'waf' : 'deferred';
}

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Nearest-rank percentile `p` (0-100] of ascending `sorted` (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarizeLatencies(samplesMs: Float64Array): LatencySummary {
  const sorted = Float64Array.from(samplesMs).sort();
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

export interface InterleavedResult {
  readonly requests: number;
  readonly durationS: number;
  readonly waf: LatencySummary;
  readonly deferred: LatencySummary;
  /** p99 of each setting in consecutive quarters of the run: how much the difference wanders. */
  readonly quarters: readonly { readonly wafP99Ms: number; readonly deferredP99Ms: number }[];
  /** Non-2xx answers. */
  readonly errors: number;
}

/**
 * Splits one run's latencies (in request order) by variant, pooled and by quarter. `latencies[k]`
 * belongs to request `k` of the measured part, whose variant is `variantOf(offset + k)`.
 */
export function splitByVariant(
  latencies: Float64Array,
  offset: number,
): Pick<InterleavedResult, 'waf' | 'deferred' | 'quarters'> {
  const pick = (from: number, to: number, variant: Variant) => {
    const out: number[] = [];
    for (let k = from; k < to; k++)
      if (variantOf(offset + k) === variant) out.push(latencies[k] as number);
    return Float64Array.from(out);
  };
  const n = latencies.length;
  const quarters = [0, 1, 2, 3].map((q) => {
    const from = Math.floor((q * n) / 4);
    const to = Math.floor(((q + 1) * n) / 4);
    return {
      wafP99Ms: summarizeLatencies(pick(from, to, 'waf')).p99Ms,
      deferredP99Ms: summarizeLatencies(pick(from, to, 'deferred')).p99Ms,
    };
  });
  return {
    waf: summarizeLatencies(pick(0, n, 'waf')),
    deferred: summarizeLatencies(pick(0, n, 'deferred')),
    quarters,
  };
}

export interface InterleavedRun {
  /** The app's base URL (`http://127.0.0.1:port`). */
  readonly url: string;
  /** Path and query of the route. */
  readonly path: string;
  /** Client addresses sent in `X-Forwarded-For`, in turn (each pair of requests shares one). */
  readonly ips: readonly string[];
  /** Requests timed, after `warmup` requests that are not. */
  readonly requests: number;
  readonly warmup: number;
  /** Where the client's parameters file goes. */
  readonly dir: string;
  readonly timeoutMs?: number;
}

/** The client program, run by Node from source like the rest of the benchmark. */
export const INTERLEAVED_CLIENT = fileURLToPath(
  new URL('./interleaved-client.ts', import.meta.url),
);

/** Runs the client in a child process (`node`, the same binary as this one) and reads its result. */
export function runInterleaved(run: InterleavedRun): Promise<InterleavedResult> {
  const params = join(run.dir, 'interleaved.json');
  writeFileSync(params, JSON.stringify(run));
  return runLoadProcess<InterleavedResult>({
    command: process.execPath,
    args: [INTERLEAVED_CLIENT, params],
    tag: 'INTERLEAVED_JSON',
    timeoutMs: run.timeoutMs ?? 120_000,
  });
}
