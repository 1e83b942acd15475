/**
 * One timed pass of one implementation over one IP set.
 *
 * Every pass starts from the IP addresses as text and ends with an answer per address, so each
 * implementation pays for its own address conversion (lexical decimal for the anchor, the
 * allocation-free parser for Rampart), as it would on a request. Inputs (IP strings, request
 * objects) are prepared before the clock starts. Durations are in nanoseconds.
 */

import type { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import type { RequestInfo } from '@rampart/rules-core/evaluator/request';
import type { Redis } from 'ioredis';
import { lookupWafrisRedis } from './wafris-redis.ts';
import type { WafrisSqliteLookup } from './wafris-sqlite.ts';

const now = () => process.hrtime.bigint();

/** Wall time of looking every IP up in every table; ids land in `out` (see `lookup`). */
export function timeSqlitePass(
  lookup: WafrisSqliteLookup,
  ips: readonly string[],
  out: Int32Array,
): number {
  const stride = lookup.tables.length;
  const started = now();
  for (let i = 0; i < ips.length; i++) lookup.lookup(ips[i] as string, out, i * stride);
  return Number(now() - started);
}

/**
 * Wall time of the same lookups in Redis, `batch` IPs per pipelined round trip. A WAF answers
 * each request before it sees the next, so `batch = 1` (one round trip carrying the IP's
 * commands for every table, as the anchor's v1 client does per request) is the honest peer;
 * larger batches show Redis's throughput when latency does not matter.
 */
export async function timeRedisPass(
  redis: Redis,
  tables: readonly string[],
  ips: readonly string[],
  out: Int32Array,
  batch: number,
): Promise<number> {
  const started = now();
  await lookupWafrisRedis(redis, tables, ips, out, batch);
  return Number(now() - started);
}

export interface EvaluationPass {
  /** Nanoseconds. */
  readonly elapsed: number;
  /** Requests that got anything but `pass` (0 in a correct worst-case run). */
  readonly notPassed: number;
}

/** Wall time of evaluating every request back to back (the mean per request, like the others). */
export function timeEvaluationPass(
  evaluator: Evaluator,
  requests: readonly RequestInfo[],
  at: number,
): EvaluationPass {
  let notPassed = 0;
  const started = now();
  for (let i = 0; i < requests.length; i++) {
    if (evaluator.evaluate(requests[i] as RequestInfo, at).action !== 'pass') notPassed++;
  }
  return { elapsed: Number(now() - started), notPassed };
}

/**
 * Evaluates every request with its own clock reading, writing request `i`'s duration to
 * `durations[offset + i]` (for percentiles). Each figure includes one clock read, ~30-50 ns.
 */
export function timeEachEvaluation(
  evaluator: Evaluator,
  requests: readonly RequestInfo[],
  at: number,
  durations: Float64Array,
  offset: number,
): number {
  let notPassed = 0;
  for (let i = 0; i < requests.length; i++) {
    const started = now();
    const decision = evaluator.evaluate(requests[i] as RequestInfo, at);
    durations[offset + i] = Number(now() - started);
    if (decision.action !== 'pass') notPassed++;
  }
  return notPassed;
}
