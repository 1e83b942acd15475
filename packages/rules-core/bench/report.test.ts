import { describe, expect, it } from 'vitest';
import { type BenchResults, formatReport, summarize } from './report.ts';
import { summarize as summarizeSamples } from './stats.ts';

const errors = {
  lookups: 10,
  shouldMatch: 8,
  falseNegatives: 2,
  falseNegativesAtRangeStart: 1,
  falsePositives: 0,
  wrongRange: 0,
};
const calls = summarizeSamples([1000, 2000, 3000, 40_000]);
const results: BenchResults = {
  ranges: { country: 3, asn: 2 },
  runs: 2,
  sizes: [
    // 1000 IPs: SQLite 50 us/IP, Redis 100 us/IP, Rampart 2 us/IP (per-pass averages).
    {
      size: 1000,
      sqliteNs: [40e6, 60e6],
      redisNs: [100e6, 100e6],
      redisBatchedNs: [50e6, 50e6],
      rampartNs: [2e6, 2e6],
      rampartCalls: calls,
    },
    // 10 IPs: SQLite 30 us/IP, Redis 300 us/IP, Rampart 6 us/IP.
    {
      size: 10,
      sqliteNs: [300e3, 300e3],
      redisNs: [3e6, 3e6],
      redisBatchedNs: [1e6, 1e6],
      rampartNs: [60e3, 60e3],
      rampartCalls: calls,
    },
  ],
  rampartAllCalls: calls,
  notPassed: 0,
  load: {
    rss_before_mb: 40,
    rss_after_mb: 100,
    rss_delta_mb: 60,
    max_stall_ms: 30,
    load_ms: 200,
    evaluator_ms: 3,
    reload_max_stall_ms: 10,
    reload_ms: 150,
  },
  anchorRandom: { country: errors },
  anchorRangeStarts: { country: errors },
  sqliteRedisAgree: true,
};

describe('report', () => {
  it('averages per-IP figures over passes, then over set sizes, and divides for ratios', () => {
    const s = summarize(results);
    expect(s.wafris_sqlite_us).toBe(40);
    expect(s.redis_us).toBe(200);
    expect(s.rampart_us_mean).toBe(4);
    expect(s.ratio_vs_wafris_sqlite).toBe(10);
    expect(s.ratio_vs_redis).toBe(50);
    expect(s.rampart_us_median).toBe(2);
    expect(s.rampart_us_p99).toBe(40);
    expect(s.targets_met).toEqual({
      ratio_vs_wafris_sqlite: true,
      ratio_vs_redis: true,
      p99_under_25us: false,
      load_stall_under_20ms: false,
      rss_under_150mb: true,
      all: false,
    });
  });

  it('prints a table whose every line but the JSON is human text', () => {
    const text = formatReport(results);
    expect(text).toContain('Wafris-style SQLite');
    expect(text).toContain('Rampart evaluate (worst case)');
    expect(text).not.toContain('{');
  });
});
