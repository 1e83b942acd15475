import { describe, expect, it } from 'vitest';
import {
  cpuMsOfStat,
  cpuTicksOfProcStat,
  hostCpuTicks,
  processCpuMs,
  stealShare,
} from './process-cpu.ts';

describe('process CPU time from /proc', () => {
  it('reads utime and stime, even when the command name holds spaces and parentheses', () => {
    const stat =
      '4242 (node (main) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 11 0 99 0 0';
    expect(cpuMsOfStat(stat)).toBe((1234 + 567) * 10);
  });

  it('grows for a process that computes', () => {
    const before = processCpuMs(process.pid) as number;
    const until = Date.now() + 60;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    expect(processCpuMs(process.pid) as number).toBeGreaterThan(before);
  });

  it('is null for a process that does not exist', () => {
    expect(processCpuMs(2 ** 30)).toBeNull();
  });
});

describe('host steal time from /proc/stat', () => {
  const stat = (steal: number, idle: number) =>
    `cpu  100 5 50 ${idle} 3 0 2 ${steal} 0 0\ncpu0 50 2 25 ${idle / 2} 1 0 1 ${steal / 2} 0 0\n`;

  it('reads the all-CPU line: steal, and the total of the eight time fields', () => {
    expect(cpuTicksOfProcStat(stat(40, 800))).toEqual({
      steal: 40,
      total: 100 + 5 + 50 + 800 + 3 + 0 + 2 + 40,
    });
    expect(cpuTicksOfProcStat('intr 1 2 3\n')).toBeNull();
    expect(cpuTicksOfProcStat('cpu 1 2 x 4 5 6 7 8\n')).toBeNull();
  });

  it('gives the stolen share of the time between two readings', () => {
    const before = cpuTicksOfProcStat(stat(40, 800));
    const after = cpuTicksOfProcStat(stat(90, 1000)); // 50 of 250 more ticks stolen
    expect(stealShare(before, after)).toBeCloseTo(0.2, 10);
    expect(stealShare(after, after)).toBeNull();
    expect(stealShare(null, after)).toBeNull();
  });

  it('reads this machine', () => {
    const now = hostCpuTicks();
    expect(now?.total).toBeGreaterThan(0);
    expect(now?.steal).toBeGreaterThanOrEqual(0);
  });
});
