import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { atMost, parseWait, waitPattern } from './poll-wait.js';

function accepted(raw: string, maxMs: number): boolean {
  try {
    parseWait(raw, maxMs);
    return true;
  } catch {
    return false;
  }
}

describe('poll waits', () => {
  it('atMost matches exactly 0..n', () => {
    for (const n of [0, 1, 9, 10, 60, 99, 100, 1000, 60000, 86400]) {
      const pattern = new RegExp(`^${atMost(n)}$`);
      for (let i = 0; i <= n + 20; i += n > 2000 ? 7 : 1) {
        expect(pattern.test(String(i)), `${i} <= ${n}`).toBe(i <= n);
      }
    }
  });

  it('the document pattern accepts exactly what parseWait accepts', () => {
    const wait = fc.oneof(
      fc
        .tuple(fc.nat({ max: 200_000 }), fc.constantFrom('', 's', 'ms', 'm', 'h', ' s'))
        .map(([n, unit]) => `${n}${unit}`),
      fc.string({ maxLength: 8 }),
      fc.constantFrom('030s', '0', '', ' 30s', '1.5s', '-1s', '00000000001m'),
    );
    fc.assert(
      fc.property(wait, fc.constantFrom(500, 2000, 60_000, 120_000), (raw, maxMs) => {
        expect(new RegExp(waitPattern(maxMs)).test(raw), raw).toBe(accepted(raw, maxMs));
      }),
      { numRuns: 5000 },
    );
  });
});
