/**
 * Linear time, proved by measurement: pathological patterns (exponential for backtrackers) on
 * 1 MiB bodies take a small constant factor of a trivial pattern on the same body, and doubling
 * the body roughly doubles the time (process CPU time, best of 5 runs; margins are wide because
 * the machine may be busy). The buffer limit is lifted so that every byte is scanned with the
 * partial match alive.
 */
import { describe, expect, it } from 'vitest';
import { compileRuleSet } from './rule-set.js';
import { Substituter } from './substituter.js';

const MiB = 1 << 20;

function timeRun(pattern: string, body: Buffer): number {
  const best: number[] = [];
  for (let run = 0; run < 5; run++) {
    const set = compileRuleSet([{ pattern, replacement: 'X', flags: 'g' }]);
    const s = new Substituter(set, { maxBufferedBytes: Number.POSITIVE_INFINITY });
    const t0 = process.cpuUsage();
    for (let i = 0; i < body.length; i += 64 * 1024) s.feed(body.subarray(i, i + 64 * 1024));
    s.end();
    const used = process.cpuUsage(t0);
    best.push((used.user + used.system) / 1000);
  }
  return Math.min(...best);
}

// The trivial pattern is skipped by the prefilter at ~1 ms/MiB; a 5 ms floor keeps the factor
// about the DFA, not about the prefilter.
describe('linear time on pathological patterns', () => {
  const cases: Array<[string, string]> = [
    ['(a+)+b', 'a'],
    ['(a|aa)*c', 'a'],
    ['(.*a){20}', 'a'],
    ['(x+x+)+y', 'x'],
  ];
  it.each(cases)('%s on 1 MiB of %s', (pattern, fill) => {
    const body = Buffer.alloc(MiB, fill);
    const trivial = Math.max(timeRun('z', body), 5);
    const pathological = timeRun(pattern, body);
    expect(pathological).toBeLessThan(trivial * 25);
    const doubled = timeRun(pattern, Buffer.alloc(2 * MiB, fill));
    expect(doubled).toBeLessThan(pathological * 4 + 10);
  });

  it('(.*a){20} on a mixed body whose matches end far apart', () => {
    const body = Buffer.alloc(MiB);
    for (let i = 0; i < MiB; i++) body[i] = i % 7 === 0 ? 0x61 : 0x62;
    const trivial = Math.max(timeRun('z', body), 5);
    expect(timeRun('(.*a){20}', body)).toBeLessThan(trivial * 25);
  });
});
