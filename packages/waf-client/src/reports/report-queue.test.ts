import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CountEntry, type Outcome, type ReportAction, ReportQueue } from './report-queue.js';

type Key = readonly [ReportAction, 'enforce' | 'monitor', string | null, Outcome];

const key: fc.Arbitrary<Key> = fc.tuple(
  fc.constantFrom<ReportAction>('pass', 'block', 'rate_limit', 'allow', 'unevaluated'),
  fc.constantFrom('enforce' as const, 'monitor' as const),
  fc.constantFrom(null, 'rule-a', 'rule-b'),
  fc.constantFrom<Outcome>('passed', 'blocked', 'rate_limited', 'failed_open'),
);

/** A step: count a request (with a weight), or take the counts as a batch would. */
const step = fc.oneof(
  { weight: 9, arbitrary: fc.tuple(key, fc.integer({ min: 1, max: 3 })) },
  { weight: 1, arbitrary: fc.constant('take' as const) },
);

const tally = (entries: readonly CountEntry[]) => {
  const out = new Map<string, number>();
  for (const e of entries) {
    const k = JSON.stringify([e.action, e.mode, e.ruleId, e.outcome]);
    out.set(k, (out.get(k) ?? 0) + e.count);
  }
  return out;
};

describe('ReportQueue counts', () => {
  it('match a plain tally of every request, batch by batch, one entry per key', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const queue = new ReportQueue(8);
        let expected = new Map<string, number>();
        const check = () => {
          const taken = queue.takeCounts();
          const keys = taken.map((e) => JSON.stringify([e.action, e.mode, e.ruleId, e.outcome]));
          expect(new Set(keys).size).toBe(keys.length);
          expect(tally(taken)).toEqual(expected);
          expect(queue.hasCounts).toBe(false);
          expected = new Map();
        };
        for (const s of steps) {
          if (s === 'take') {
            check();
            continue;
          }
          const [[action, mode, ruleId, outcome], n] = s;
          queue.count(action, mode, ruleId, outcome, n);
          const k = JSON.stringify([action, mode, ruleId, outcome]);
          expected.set(k, (expected.get(k) ?? 0) + n);
        }
        check();
      }),
      { numRuns: 300 },
    );
  });

  it('take back the counts of a failed batch, added to what came since', () => {
    const queue = new ReportQueue(8);
    queue.count('pass', 'enforce', null, 'passed');
    queue.count('pass', 'enforce', null, 'passed');
    const failed = queue.takeCounts();
    queue.count('pass', 'enforce', null, 'passed');
    queue.count('block', 'enforce', 'rule-a', 'blocked');
    queue.mergeCounts(failed);
    queue.count('pass', 'enforce', null, 'passed');
    expect(tally(queue.takeCounts())).toEqual(
      new Map([
        [JSON.stringify(['pass', 'enforce', null, 'passed']), 4],
        [JSON.stringify(['block', 'enforce', 'rule-a', 'blocked']), 1],
      ]),
    );
  });
});
