import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventSample } from './event-sample.js';

const at = (second: number) => new Date(Date.UTC(2026, 11, 5, 12, 0, second, 250)).toISOString();

describe('the raw-event sample', () => {
  it('keeps the first events of each site and second up to the budget', () => {
    const sample = new EventSample(2);
    expect([1, 2, 3].map(() => sample.keep('shop', at(1)))).toEqual([true, true, false]);
    expect(sample.keep('shop', at(2))).toBe(true);
    expect(sample.keep('blog', at(1))).toBe(true);
    // Milliseconds do not make another second.
    expect(sample.keep('shop', at(1).replace('.250Z', '.999Z'))).toBe(false);
  });

  it('keeps nothing with a budget of 0', () => {
    expect(new EventSample(0).keep('shop', at(1))).toBe(false);
  });

  it('remembers a spent second for one to two minutes of wall time after it was spent', () => {
    let now = 0;
    const sample = new EventSample(1, () => now);
    expect(sample.keep('shop', at(1))).toBe(true);
    now = 59_000;
    sample.rotate();
    expect(sample.keep('shop', at(1))).toBe(false);
    now = 61_000;
    sample.rotate();
    expect(sample.keep('shop', at(1))).toBe(false);
    now = 122_000;
    sample.rotate();
    expect(sample.keep('shop', at(1))).toBe(true);
  });

  it('forgets everything after a long pause', () => {
    let now = 0;
    const sample = new EventSample(1, () => now);
    sample.keep('shop', at(1));
    now = 500_000;
    sample.rotate();
    expect(sample.keep('shop', at(1))).toBe(true);
  });

  it('keeps min(budget, arrivals) of every site and second, whatever the order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 3 })), {
          maxLength: 60,
        }),
        (budget, arrivals) => {
          const sample = new EventSample(budget, () => 0);
          const kept = new Map<string, number>();
          const seen = new Map<string, number>();
          for (const [site, second] of arrivals) {
            const key = `${site} ${second}`;
            seen.set(key, (seen.get(key) ?? 0) + 1);
            if (sample.keep(site, at(second))) kept.set(key, (kept.get(key) ?? 0) + 1);
          }
          for (const [key, n] of seen) expect(kept.get(key) ?? 0).toBe(Math.min(budget, n));
        },
      ),
    );
  });
});
