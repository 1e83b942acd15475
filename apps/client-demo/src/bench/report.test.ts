import { describe, expect, it } from 'vitest';
import { formatReport, type ModeRun, summarize } from './report.js';
import type { WrkResult } from './wrk.js';

const wrk = (rps: number, p50Ms: number, p99Ms: number): WrkResult => ({
  requests: rps * 10,
  durationS: 10,
  rps,
  errors: 0,
  p50Ms,
  p90Ms: p99Ms,
  p99Ms,
  maxMs: p99Ms * 2,
});

const runs: ModeRun[] = [
  { mode: 'off', round: 1, saturated: wrk(10_000, 1.5, 3), single: wrk(8000, 0.1, 0.2) },
  { mode: 'enforce', round: 1, saturated: wrk(9600, 1.6, 3.2), single: wrk(7800, 0.11, 0.25) },
  { mode: 'enforce', round: 2, saturated: wrk(9400, 1.6, 3.4), single: wrk(7800, 0.13, 0.27) },
  { mode: 'off', round: 2, saturated: wrk(10_000, 1.5, 3), single: wrk(8000, 0.1, 0.2) },
];

const input = {
  route: '/robots.txt',
  rangeCount: 1_067_132,
  ruleCount: 28,
  ruleTypes: ['ip', 'pattern'],
  addresses: 1000,
  connections: 16,
  durationS: 10,
  singleDurationS: 5,
  runs,
  swap: {
    baselineMaxStallMs: 4,
    swapMaxStallMs: 12.5,
    swapSeconds: 1.2,
    evaluatorBuildMs: 1.5,
    versionAfter: 2,
    errors: 0,
  },
};

describe('the bench:middleware report', () => {
  it('pools the rounds of each mode: throughput ratio and added latency', () => {
    const s = summarize(input);
    expect(s.rps_off).toBe(10_000);
    expect(s.rps_enforce).toBe(9500);
    expect(s.throughput_ratio).toBe(0.95);
    expect(s.added_p50_ms).toBe(0.02); // (0.11 + 0.13) / 2 - 0.1
    expect(s.added_p99_ms).toBe(0.06);
    expect(s.added_p99_ms_saturated).toBe(0.3);
    expect(s.swapped).toBe(true);
  });

  it('ends with one JSON line holding the headline figures', () => {
    const lines = formatReport(input).split('\n');
    const last = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    expect(last).toMatchObject({
      throughput_ratio: 0.95,
      added_p99_ms: 0.06,
      swap_max_stall_ms: 12.5,
    });
    expect(lines.join('\n')).toContain('meets target');
    expect(lines.join('\n')).not.toContain('WARNING');
  });

  it('warns when the swap did not happen', () => {
    const text = formatReport({ ...input, swap: { ...input.swap, versionAfter: 1 } });
    expect(text).toContain('WARNING: the client did not swap');
  });
});
