/**
 * The timed part of the benchmark: the three contenders, their warm-up, the passes over each IP
 * set in the seed's order (SQLite, Redis, Rampart, repeated), and the check of the anchor's
 * answers against exact lookups.
 */

import type { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import type { RequestInfo } from '@rampart/rules-core/evaluator/request';
import type { Redis } from 'ioredis';
import {
  type AccuracyCounts,
  addCounts,
  compareWithReference,
  type ReferenceTable,
  ZERO_COUNTS,
} from './accuracy.ts';
import {
  timeEachEvaluation,
  timeEvaluationPass,
  timeRedisPass,
  timeSqlitePass,
} from './measure.ts';
import type { Inputs, References } from './probe-inputs.ts';
import type { SizeMeasurements } from './report.ts';
import { summarize as summarizeSamples } from './stats.ts';
import type { WafrisSqliteLookup } from './wafris-sqlite.ts';
import { probeRequest } from './worst-case-rules.ts';

/** The anchor's tables, in lookup order; ids index the `country` and `asn` entries. */
export const TABLES = ['country', 'asn'] as const;
/** IPs per round trip for the batched Redis figure (context only; see `timeRedisPass`). */
const REDIS_BATCH = 1000;
/** A fixed evaluation time, so no rule expiry depends on when the benchmark runs. */
const EVALUATION_TIME = Date.parse('2026-01-01T00:00:00Z');

/** The three contenders, ready to be timed. */
export interface Contenders {
  readonly sqlite: WafrisSqliteLookup;
  readonly redis: Redis;
  readonly evaluator: Evaluator;
}

/** One unmeasured pass of each contender, so JIT compilation and caches do not land in pass 1. */
export async function warmUp(c: Contenders, warmup: readonly string[]): Promise<void> {
  const out = new Int32Array(warmup.length * TABLES.length);
  timeSqlitePass(c.sqlite, warmup, out);
  await timeRedisPass(c.redis, TABLES, warmup, out, 1);
  await timeRedisPass(c.redis, TABLES, warmup, out, REDIS_BATCH);
  const requests: RequestInfo[] = warmup.map(probeRequest);
  for (let i = 0; i < 3; i++) timeEvaluationPass(c.evaluator, requests, EVALUATION_TIME);
  timeEachEvaluation(c.evaluator, requests, EVALUATION_TIME, new Float64Array(requests.length), 0);
}

export interface SizeOutcome {
  readonly measurements: SizeMeasurements;
  /** Per-call durations of every pass, nanoseconds. */
  readonly calls: Float64Array;
  readonly notPassed: number;
  readonly sqliteIds: Int32Array;
  readonly redisIds: Int32Array;
}

/** Runs one IP set `runs` times through each contender, in the same order every time. */
export async function measureSize(
  c: Contenders,
  ips: readonly string[],
  runs: number,
): Promise<SizeOutcome> {
  const sqliteIds = new Int32Array(ips.length * TABLES.length);
  const redisIds = new Int32Array(ips.length * TABLES.length);
  const requests: RequestInfo[] = ips.map(probeRequest);
  const calls = new Float64Array(ips.length * runs);
  const sqliteNs: number[] = [];
  const redisNs: number[] = [];
  const redisBatchedNs: number[] = [];
  const rampartNs: number[] = [];
  let notPassed = 0;
  // No forced GC between passes: a full collection shrinks the young generation, and the pass
  // after it pays for extra scavenges (measured: ~60% slower Rampart passes), which is an
  // artefact of the harness, not something a server sees.
  for (let run = 0; run < runs; run++) {
    sqliteNs.push(timeSqlitePass(c.sqlite, ips, sqliteIds));
    redisNs.push(await timeRedisPass(c.redis, TABLES, ips, redisIds, 1));
    redisBatchedNs.push(await timeRedisPass(c.redis, TABLES, ips, redisIds, REDIS_BATCH));
    const pass = timeEvaluationPass(c.evaluator, requests, EVALUATION_TIME);
    rampartNs.push(pass.elapsed);
    notPassed +=
      pass.notPassed +
      timeEachEvaluation(c.evaluator, requests, EVALUATION_TIME, calls, run * ips.length);
  }
  const measurements = {
    size: ips.length,
    sqliteNs,
    redisNs,
    redisBatchedNs,
    rampartNs,
    rampartCalls: summarizeSamples(calls),
  };
  return { measurements, calls, notPassed, sqliteIds, redisIds };
}

/** True when both contenders of the anchor layout gave identical answers. */
export function sameIds(a: Int32Array, b: Int32Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The per-call samples of every size, in one array. */
export function concatFloat64(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The anchor's errors on one set, per table. */
export function accuracyOf(
  ips: readonly string[],
  ids: Int32Array,
  refs: References,
): Record<string, AccuracyCounts> {
  return {
    country: compareWithReference(ips, ids, TABLES.length, 0, refs.country),
    asn: compareWithReference(ips, ids, TABLES.length, 1, refs.asn),
  };
}

/** Anchor answers for the first address of random ranges, each probe set against its own table. */
export function rangeStartAccuracy(
  c: Contenders,
  inputs: Inputs,
  refs: References,
): Record<string, AccuracyCounts> {
  const check = (ips: readonly string[], t: number, reference: ReferenceTable) => {
    const ids = new Int32Array(ips.length * TABLES.length);
    timeSqlitePass(c.sqlite, ips, ids);
    return compareWithReference(ips, ids, TABLES.length, t, reference);
  };
  return {
    country: check(inputs.rangeStarts.country, 0, refs.country),
    asn: check(inputs.rangeStarts.asn, 1, refs.asn),
  };
}

/** Sums per-table counts over the sets. */
export function mergeAccuracy(
  parts: readonly Record<string, AccuracyCounts>[],
): Record<string, AccuracyCounts> {
  const out: Record<string, AccuracyCounts> = {};
  for (const part of parts) {
    for (const [table, counts] of Object.entries(part))
      out[table] = addCounts(out[table] ?? ZERO_COUNTS, counts);
  }
  return out;
}
