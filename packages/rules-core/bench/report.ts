/**
 * Turns benchmark measurements into the printed table and the one-line JSON summary. Pure: no
 * clocks, no I/O, so the report's arithmetic (what is averaged over what) is in one place.
 *
 * Per-IP figures: a pass's wall time divided by its number of IPs; a set size's figure is the
 * average of its passes (the seed's protocol: each set run 5 times, averaged); the headline figure
 * of an implementation is the average over set sizes, each size weighing the same. Rampart's
 * median and p99 come from timing every call of every pass of every size individually.
 */
import { mean, type Summary } from './stats.ts';

export const TARGETS = {
  ratioVsWafrisSqlite: 10,
  ratioVsRedis: 50,
  p99Us: 25,
  loadStallMs: 20,
  rssDeltaMb: 150,
} as const;

export interface SizeMeasurements {
  readonly size: number;
  /** Wall time per pass, nanoseconds. */
  readonly sqliteNs: readonly number[];
  /** One pipelined round trip per IP (what a WAF request costs). */
  readonly redisNs: readonly number[];
  /** 1000 IPs per round trip (throughput when latency does not matter; not the peer). */
  readonly redisBatchedNs: readonly number[];
  readonly rampartNs: readonly number[];
  /** Per-call Rampart durations over all passes of this size, nanoseconds. */
  readonly rampartCalls: Summary;
}

export interface LoadMeasurements {
  readonly rss_before_mb: number;
  readonly rss_after_mb: number;
  readonly rss_delta_mb: number;
  readonly max_stall_ms: number;
  readonly load_ms: number;
  readonly evaluator_ms: number;
  readonly reload_max_stall_ms: number;
  readonly reload_ms: number;
  /** Longest first-load stall of each probe run, ascending (see `runLoadProbes`). */
  readonly stall_runs_ms?: readonly number[];
}

export interface AnchorErrors {
  readonly lookups: number;
  readonly shouldMatch: number;
  readonly falseNegatives: number;
  readonly falseNegativesAtRangeStart: number;
  readonly falsePositives: number;
  readonly wrongRange: number;
}

export interface BenchResults {
  readonly ranges: { readonly country: number; readonly asn: number };
  readonly runs: number;
  readonly sizes: readonly SizeMeasurements[];
  /** Per-call Rampart durations over everything, nanoseconds. */
  readonly rampartAllCalls: Summary;
  readonly notPassed: number;
  readonly load: LoadMeasurements;
  /** Anchor answers over the random sets, per table. */
  readonly anchorRandom: Readonly<Record<string, AnchorErrors>>;
  /** Anchor answers for the first address of randomly picked ranges, per table. */
  readonly anchorRangeStarts: Readonly<Record<string, AnchorErrors>>;
  readonly sqliteRedisAgree: boolean;
}

/** Microseconds per IP of one pass. */
function usPerIp(ns: number, size: number): number {
  return ns / size / 1000;
}

function sizeMeanUs(runsNs: readonly number[], size: number): number {
  return mean(runsNs.map((ns) => usPerIp(ns, size)));
}

/** The headline per-IP figure: average over set sizes of each size's average over passes. */
function headlineUs(
  sizes: readonly SizeMeasurements[],
  pick: (s: SizeMeasurements) => readonly number[],
): number {
  return mean(sizes.map((s) => sizeMeanUs(pick(s), s.size)));
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

const COLUMNS = [
  'implementation',
  'IPs',
  'passes',
  'mean us/IP',
  'pass min-max us/IP',
  'median us',
  'p99 us',
];

/** One table row per implementation and set size. */
function tableRows(results: BenchResults): string[][] {
  const rows: string[][] = [];
  const impls: [string, (s: SizeMeasurements) => readonly number[], boolean][] = [
    ['Wafris-style SQLite', (s) => s.sqliteNs, false],
    ['Wafris-style Redis (per request)', (s) => s.redisNs, false],
    ['Redis, 1000 IPs per trip (info)', (s) => s.redisBatchedNs, false],
    ['Rampart evaluate (worst case)', (s) => s.rampartNs, true],
  ];
  for (const [name, pick, perCall] of impls) {
    for (const s of results.sizes) {
      const perPass = pick(s).map((ns) => usPerIp(ns, s.size));
      rows.push([
        name,
        s.size.toLocaleString('en-US'),
        String(perPass.length),
        fixed(mean(perPass), 3),
        `${fixed(Math.min(...perPass), 3)}-${fixed(Math.max(...perPass), 3)}`,
        perCall ? fixed(s.rampartCalls.median / 1000, 3) : '',
        perCall ? fixed(s.rampartCalls.p99 / 1000, 3) : '',
      ]);
    }
  }
  return rows;
}

/** Pads columns to equal width: first column left-aligned, the rest right-aligned. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Two lines per table: what was looked up, then the false negatives by cause. */
function errorLines(table: string, e: AnchorErrors): string {
  const share = e.shouldMatch === 0 ? 0 : (100 * e.falseNegatives) / e.shouldMatch;
  const overlap = e.falseNegatives - e.falseNegativesAtRangeStart;
  return [
    `  ${table.padEnd(8)} ${e.lookups} lookups, ${e.shouldMatch} inside a range, ` +
      `${e.falsePositives} false positives, ${e.wrongRange} wrong range, ` +
      `${e.falseNegatives} false negatives (${fixed(share, 2)}%):`,
    `  ${' '.repeat(8)} ${e.falseNegativesAtRangeStart} at the first address of a range (defect 1), ` +
      `${overlap} inside overlapping or nested ranges (defect 2)`,
  ].join('\n');
}

/** The human-readable part of the report (everything but the final JSON line). */
export function formatReport(results: BenchResults): string {
  const summary = summarize(results);
  const total = results.ranges.country + results.ranges.asn;
  const lines = [
    `Lookup benchmark: ${total.toLocaleString('en-US')} ranges (country ${results.ranges.country.toLocaleString('en-US')}, ASN ${results.ranges.asn.toLocaleString('en-US')}), IPv4 + IPv6, ${results.runs} passes per set`,
    '',
    formatTable(COLUMNS, tableRows(results)),
    '',
    `Rampart per call over all ${results.rampartAllCalls.count.toLocaleString('en-US')} calls: ` +
      `median ${fixed(summary.rampart_us_median, 3)} us, p99 ${fixed(summary.rampart_us_p99, 3)} us, ` +
      `max ${fixed(results.rampartAllCalls.max / 1000, 1)} us; decisions other than pass: ${results.notPassed}`,
    `Ratios (headline = mean over set sizes): Wafris SQLite / Rampart = ${fixed(summary.ratio_vs_wafris_sqlite, 1)}x, ` +
      `Redis / Rampart = ${fixed(summary.ratio_vs_redis, 1)}x`,
    `Snapshot load (child process): open ${fixed(results.load.load_ms, 0)} ms + evaluator ${fixed(results.load.evaluator_ms, 0)} ms, ` +
      `longest event-loop stall ${fixed(results.load.max_stall_ms, 2)} ms (median of runs: ${(results.load.stall_runs_ms ?? []).map((v) => fixed(v, 1)).join(', ')}), RSS ${fixed(results.load.rss_before_mb, 1)} -> ` +
      `${fixed(results.load.rss_after_mb, 1)} MB (+${fixed(results.load.rss_delta_mb, 1)} MB)`,
    `Snapshot reload (second load, same warm process, as a swap): ${fixed(results.load.reload_ms, 0)} ms, ` +
      `longest event-loop stall ${fixed(results.load.reload_max_stall_ms, 2)} ms`,
    `Anchor layout errors, random sets (SQLite and Redis answers ${results.sqliteRedisAgree ? 'identical' : 'DIFFER'}):`,
    ...Object.entries(results.anchorRandom).map(([t, e]) => errorLines(t, e)),
    'Anchor layout errors, first address of random ranges:',
    ...Object.entries(results.anchorRangeStarts).map(([t, e]) => errorLines(t, e)),
    `Targets: ${Object.entries(summary.targets_met)
      .map(([k, v]) => `${k} ${v ? 'met' : 'MISSED'}`)
      .join(', ')}`,
  ];
  return lines.join('\n');
}

/** The machine-readable summary printed as the last line. */
export function summarize(results: BenchResults) {
  const wafrisSqliteUs = headlineUs(results.sizes, (s) => s.sqliteNs);
  const redisUs = headlineUs(results.sizes, (s) => s.redisNs);
  const rampartMeanUs = headlineUs(results.sizes, (s) => s.rampartNs);
  const medianUs = results.rampartAllCalls.median / 1000;
  const p99Us = results.rampartAllCalls.p99 / 1000;
  const ratioSqlite = wafrisSqliteUs / rampartMeanUs;
  const ratioRedis = redisUs / rampartMeanUs;
  const targets = {
    ratio_vs_wafris_sqlite: ratioSqlite >= TARGETS.ratioVsWafrisSqlite,
    ratio_vs_redis: ratioRedis >= TARGETS.ratioVsRedis,
    p99_under_25us: p99Us < TARGETS.p99Us,
    load_stall_under_20ms: results.load.max_stall_ms < TARGETS.loadStallMs,
    rss_under_150mb: results.load.rss_delta_mb < TARGETS.rssDeltaMb,
  };
  const falseNegatives = (errors: Readonly<Record<string, AnchorErrors>>) =>
    Object.values(errors).reduce((sum, e) => sum + e.falseNegatives, 0);
  return {
    ranges: results.ranges.country + results.ranges.asn,
    ranges_country: results.ranges.country,
    ranges_asn: results.ranges.asn,
    ip_sets: results.sizes.map((s) => s.size),
    passes_per_set: results.runs,
    rampart_us_mean: round(rampartMeanUs, 4),
    rampart_us_mean_per_call: round(results.rampartAllCalls.mean / 1000, 4),
    rampart_us_median: round(medianUs, 4),
    rampart_us_p99: round(p99Us, 4),
    wafris_sqlite_us: round(wafrisSqliteUs, 3),
    redis_us: round(redisUs, 3),
    redis_batched_us: round(
      headlineUs(results.sizes, (s) => s.redisBatchedNs),
      3,
    ),
    ratio_vs_wafris_sqlite: round(ratioSqlite, 1),
    ratio_vs_redis: round(ratioRedis, 1),
    load_max_stall_ms: results.load.max_stall_ms,
    load_stall_runs_ms: results.load.stall_runs_ms ?? [results.load.max_stall_ms],
    load_ms: results.load.load_ms,
    reload_max_stall_ms: results.load.reload_max_stall_ms,
    rss_delta_mb: results.load.rss_delta_mb,
    rampart_not_passed: results.notPassed,
    anchor_false_negatives_random: falseNegatives(results.anchorRandom),
    anchor_false_negatives_range_starts: falseNegatives(results.anchorRangeStarts),
    by_size: results.sizes.map((s) => ({
      ips: s.size,
      wafris_sqlite_us: round(sizeMeanUs(s.sqliteNs, s.size), 3),
      redis_us: round(sizeMeanUs(s.redisNs, s.size), 3),
      redis_batched_us: round(sizeMeanUs(s.redisBatchedNs, s.size), 3),
      rampart_us_mean: round(sizeMeanUs(s.rampartNs, s.size), 4),
      rampart_us_median: round(s.rampartCalls.median / 1000, 4),
      rampart_us_p99: round(s.rampartCalls.p99 / 1000, 4),
    })),
    targets_met: { ...targets, all: Object.values(targets).every(Boolean) },
  };
}
