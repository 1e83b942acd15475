import { describe, expect, it } from 'vitest';
import { cpuMsOfStat, processCpuMs } from './process-cpu.js';

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
