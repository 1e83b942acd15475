import type { WrkResult } from '@rampart/test-services/wrk';
import { describe, expect, it } from 'vitest';
import { formatReport, type ModeRun, median, type SwapWindow, summarize } from './report.ts';

const wrk = (rps: number, p50Ms: number, p99Ms: number): WrkResult => ({
  mbPerS: 0,
  requests: rps * 10,
  durationS: 10,
  rps,
  errors: 0,
  p50Ms,
  p90Ms: p99Ms,
  p99Ms,
  maxMs: p99Ms * 2,
});

/** CPU us per request of each test run, by mode (round 3's off has none: /proc unreadable). */
const CPU = { off: 80, enforce: 84, inline: 100, deferred: 76 } as const;

const rawRuns: Omit<ModeRun, 'cpuUsPerRequest' | 'hostSteal'>[] = [
  { mode: 'off', round: 1, saturated: wrk(10_000, 1.5, 3), single: wrk(8000, 0.1, 0.2) },
  { mode: 'enforce', round: 1, saturated: wrk(9600, 1.6, 3.2), single: wrk(7800, 0.11, 0.25) },
  { mode: 'enforce', round: 2, saturated: wrk(9400, 1.6, 3.4), single: wrk(7800, 0.13, 0.27) },
  { mode: 'off', round: 2, saturated: wrk(10_000, 1.5, 3), single: wrk(8000, 0.1, 0.2) },
  // A round disturbed by something else on the machine: the medians hardly move.
  { mode: 'off', round: 3, saturated: wrk(5000, 1.5, 30), single: wrk(8000, 0.1, 9) },
  { mode: 'enforce', round: 3, saturated: wrk(9500, 1.6, 3.3), single: wrk(7800, 0.12, 0.26) },
  { mode: 'inline', round: 1, saturated: wrk(8000, 1.8, 3.6), single: wrk(7800, 0.12, 0.3) },
  { mode: 'deferred', round: 1, saturated: wrk(11_000, 1.4, 2.9), single: wrk(8000, 0.1, 0.2) },
  { mode: 'deferred', round: 2, saturated: wrk(10_500, 1.4, 2.9), single: wrk(8000, 0.1, 0.2) },
  { mode: 'inline', round: 2, saturated: wrk(8500, 1.8, 3.6), single: wrk(7800, 0.12, 0.4) },
  // round 3 ran off and enforce only: the other ratios come from rounds 1 and 2
];

const runs: ModeRun[] = rawRuns.map((r) => ({
  ...r,
  cpuUsPerRequest: r.round === 3 && r.mode === 'off' ? null : CPU[r.mode],
  // 1%, 2% and (unreadable) in rounds 1, 2 and 3
  hostSteal: r.round === 3 ? null : r.round / 100,
}));

const window = (
  version: number | null,
  maxStallMs: number,
  duringStallMs: number | null = maxStallMs / 2,
): SwapWindow => ({
  version,
  change: version === null ? null : version === 5 ? 'data' : 'rules',
  maxStallMs,
  duringStallMs,
  hostSteal: version === null ? 0.03 : 0.3,
  swapSeconds: version === null ? null : 1.2,
  evaluatorBuildMs: version === null ? null : 1.5,
  versionAfter: version,
  errors: 0,
});

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
  switchWindows: [
    { variant: 'waf', rps: 9000, cpuUsPerRequest: 90, hostSteal: 0.05, errors: 0 },
    { variant: 'deferred', rps: 10_000, cpuUsPerRequest: 81, hostSteal: 0.04, errors: 0 },
    { variant: 'deferred', rps: 10_000, cpuUsPerRequest: 80, hostSteal: null, errors: 0 },
    { variant: 'waf', rps: 9500, cpuUsPerRequest: 88, hostSteal: 0.02, errors: 0 },
    // an unpaired last window counts for nothing
    { variant: 'waf', rps: 1, cpuUsPerRequest: 1, hostSteal: 0.01, errors: 0 },
  ] as const,
  interleaved: {
    requests: 1000,
    durationS: 0.2,
    waf: { count: 500, p50Ms: 0.11, p90Ms: 0.13, p99Ms: 0.25, maxMs: 2 },
    deferred: { count: 500, p50Ms: 0.1, p90Ms: 0.12, p99Ms: 0.22, maxMs: 3 },
    quarters: [
      { wafP99Ms: 0.25, deferredP99Ms: 0.2 },
      { wafP99Ms: 0.24, deferredP99Ms: 0.23 },
      { wafP99Ms: 0.26, deferredP99Ms: 0.22 },
      { wafP99Ms: 0.25, deferredP99Ms: 0.21 },
    ],
    errors: 0,
  },
  swaps: [
    window(null, 4),
    window(2, 12.5),
    window(null, 5),
    window(3, 9),
    window(null, 3),
    window(4, 30),
    window(null, 4),
    window(5, 25),
  ],
};

describe('the bench:middleware report', () => {
  it('takes medians of matched rounds: throughput ratio and added latency', () => {
    const s = summarize(input);
    expect(s.rounds).toBe(3);
    expect(s.throughput_ratio).toBe(0.96); // rounds: 0.96, 0.94, 1.9
    expect(s.added_p50_ms_across_processes).toBe(0.02); // rounds: 0.01, 0.03, 0.02
    expect(s.added_p99_ms_across_processes).toBe(0.05); // rounds: 0.05, 0.07, -8.74
    expect(s.rps_off).toBe(8333);
  });

  it('compares the other modes over the rounds that ran them', () => {
    const s = summarize(input);
    expect(s.throughput_ratio_inline).toBe(0.825); // rounds: 0.8, 0.85
    expect(s.deferral_gain).toBe(1.075); // rounds: 1.1, 1.05
    expect(s.throughput_ratio_vs_deferred).toBe(0.884); // rounds: 0.873, 0.895
    expect(s.added_p99_ms_inline_across_processes).toBe(0.15); // rounds: 0.1, 0.2
    expect([s.rps_inline, s.rps_deferred]).toEqual([8250, 10_750]);
  });

  it('pairs the in-process windows: the WAF against the holding alone', () => {
    const s = summarize(input);
    expect(s.in_process_ratio_vs_deferred).toBe(0.925); // pairs: 0.9, 0.95
    expect(s.in_process_cpu_ratio_vs_deferred).toBe(0.905); // pairs: 81/90, 80/88
    expect(formatReport(input)).toContain('waf / deferred in one process (median of pairs): 0.925');
    expect(summarize({ ...input, switchWindows: [] }).in_process_ratio_vs_deferred).toBeNaN();
  });

  it('takes the added latency of a lone request from the interleaved run', () => {
    const s = summarize(input);
    expect([s.added_p50_ms, s.added_p99_ms]).toEqual([0.01, 0.03]);
    expect(formatReport(input)).toContain(
      'WAF and no WAF in turn on 1 connection (1000 requests, 0.2 s): p50 0.010 ms, p99 0.030 ms (target p99 <= 0.2 ms: meets target)',
    );
    expect(formatReport(input)).toContain(
      'p99 by quarter of the run (waf / no WAF): 0.250 / 0.200,',
    );
    expect(summarize({ ...input, interleaved: null }).added_p99_ms).toBeNaN();
    const failing = { ...input.interleaved, errors: 3 };
    expect(summarize({ ...input, interleaved: failing }).errors).toBe(3);
  });

  it('compares CPU per request, skipping runs without it', () => {
    const s = summarize(input);
    expect(s.cpu_us_per_request_off).toBe(80);
    expect(s.cpu_ratio).toBe(0.952); // 80 / 84, rounds 1 and 2 (round 3's off has none)
    expect(s.cpu_ratio_inline).toBe(0.8);
    expect(s.cpu_ratio_vs_deferred).toBe(0.905); // 76 / 84
    expect(formatReport(input)).toContain('CPU per request, all threads (median): off 80.0');
  });

  it('summarizes the swaps next to their baselines', () => {
    const s = summarize(input);
    expect(s).toMatchObject({
      swaps: 4,
      swaps_completed: 4,
      swap_max_stall_ms: 12.5, // rule changes: 12.5, 9, 30
      swap_data_max_stall_ms: 25,
      swap_worst_stall_ms: 30,
      baseline_max_stall_ms: 4,
      // during the swaps (or the same stretch of the baselines): half of each window's here
      during_swap_stall_ms: 6.25,
      during_swap_data_stall_ms: 12.5,
      during_swap_worst_stall_ms: 15,
      during_baseline_stall_ms: 2,
    });
  });

  it('judges the stall target on the stalls during the swaps, not on whole windows', () => {
    // Whole windows over the target (a collection seconds away from the swap), the swaps under.
    const noisy = {
      ...input,
      swaps: [window(null, 28, 3), window(2, 27, 4), window(3, 44, 19), window(5, 37, 6)],
    };
    const report = formatReport(noisy);
    expect(report).toContain('rule change (range tables kept): 11.5 ms, median of 2 swaps: meets');
    expect(report).toContain('data change (a range table loaded anew): 6.0 ms: meets');
    expect(report).toContain('whole windows: rule change 35.5 ms (median), data change 37.0 ms');
    const swaps = noisy.swaps.map((w) => (w.version === 2 ? window(2, 27, 21) : w));
    const over = formatReport({ ...noisy, swaps });
    expect(over).toContain('rule change (range tables kept): 20.0 ms, median of 2 swaps: MISSES');
  });

  it('leaves a swap that did not complete out of the stall figures, and fails the verdict', () => {
    const swaps = [window(null, 4), window(2, 12, null), window(3, 8, 3), window(5, 9, 2)];
    const s = summarize({ ...input, swaps });
    expect(s.during_swap_stall_ms).toBe(3);
    expect(s.during_baseline_stall_ms).toBe(2);
  });

  it('ends with one JSON line holding the headline figures', () => {
    const lines = formatReport(input).split('\n');
    const last = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    expect(last).toMatchObject({
      throughput_ratio: 0.96,
      added_p99_ms: 0.03,
      swap_max_stall_ms: 12.5,
    });
    expect(lines.join('\n')).toContain('meets target');
    expect(lines.join('\n')).not.toContain('WARNING');
  });

  it('warns when a swap did not happen', () => {
    const swaps = [...input.swaps.slice(0, 5), { ...window(4, 3, null), versionAfter: 3 }];
    // Rule changes 2 and 3 only (6.25 and 4.5 during the swap); the verdict fails all the same.
    expect(formatReport({ ...input, swaps })).toContain(
      'rule change (range tables kept): 5.4 ms, median of 2 swaps: MISSES',
    );
    expect(formatReport({ ...input, swaps })).toContain('WARNING: 1 swap(s) did not complete');
  });

  it('prints how much CPU time the host stole, per run and window and over all', () => {
    const s = summarize(input);
    // %: runs 1 x4, 2 x4 (round 3 unreadable); switch windows 5, 4, 2, 1; swaps 3 x4, 30 x4
    expect(s.host_steal_median).toBe(0.025);
    expect(s.host_steal_max).toBe(0.3);
    const report = formatReport(input);
    expect(report).toContain('over all saturated runs and windows: median 2.5%, up to 30.0%');
    expect(report).toContain('waf 9000 req/s 90.0 us (steal 5.0%)');
    expect(report).toMatch(/ {2}rules swap +2\/2 .* 30\.0 +0$/m);
  });

  it('gives the comparisons again over the runs the host left alone', () => {
    const s = summarize(input);
    // Rounds 1 and 2 stole 1% and 2% (quiet); round 3 has no reading, so it is left out.
    expect(s).toMatchObject({ quiet_rounds: 2, throughput_ratio_quiet: 0.95 });
    expect(s.quiet_rounds_vs_deferred).toBe(2);
    expect(s.throughput_ratio_vs_deferred_quiet).toBe(s.throughput_ratio_vs_deferred);
    // No pair of in-process windows was quiet (5% and 4%; unknown and 2%).
    expect(s.quiet_in_process_pairs).toBe(0);
    expect(Number.isNaN(s.in_process_cpu_ratio_vs_deferred_quiet)).toBe(true);
    expect(formatReport(input)).toContain('only where the host stole under 3% from both');
    expect(formatReport(input)).toContain('in one process by CPU - (0 pairs)');

    // A busy host during round 2's enforce run: only round 1 is left.
    const busy = input.runs.map((r) =>
      r.round === 2 && r.mode === 'enforce' ? { ...r, hostSteal: 0.2 } : r,
    );
    const quiet = summarize({ ...input, runs: busy });
    expect(quiet).toMatchObject({ quiet_rounds: 1, throughput_ratio_quiet: 0.96 });
    expect(quiet.throughput_ratio).toBe(0.96); // the headline keeps every round

    const calm = input.switchWindows.map((w) => ({ ...w, hostSteal: 0.01 }));
    const inProcess = summarize({ ...input, switchWindows: calm });
    expect(inProcess.quiet_in_process_pairs).toBe(2);
    expect(inProcess.in_process_cpu_ratio_vs_deferred_quiet).toBe(
      inProcess.in_process_cpu_ratio_vs_deferred,
    );
  });

  it('takes the median of an even count as the mean of the middle two', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
  });
});
