import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ms, serverTiming } from './server-timing.js';

describe('ms (Server-Timing durations)', () => {
  it('writes three decimals, zero-padded', () => {
    expect(ms(0)).toBe('0.000');
    expect(ms(0.0004)).toBe('0.000');
    expect(ms(0.0126)).toBe('0.013');
    expect(ms(0.05)).toBe('0.050');
    expect(ms(1.9996)).toBe('2.000');
    expect(ms(1734.2)).toBe('1734.200');
  });

  it('is within half a thousandth of the duration, in the format toFixed(3) uses', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (value) => {
        const text = ms(value);
        expect(text).toMatch(/^\d+\.\d{3}$/);
        expect(Math.abs(Number(text) - value)).toBeLessThanOrEqual(0.0005 + value * 1e-15);
      }),
    );
  });

  it('agrees with toFixed(3) away from exact ties', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 999 }),
        (t, tenthousandth) => {
          // t thousandths plus a fraction of one that is not a half: no tie to break either way
          fc.pre(tenthousandth !== 500);
          const value = (t + tenthousandth / 1000) / 1000;
          expect(ms(value)).toBe(value.toFixed(3));
        },
      ),
    );
  });
});

describe('serverTiming', () => {
  it('joins metrics in order, with dur and quoted desc where given', () => {
    expect(
      serverTiming([
        { name: 'waf', dur: 0.0123, desc: 'pass/enforce' },
        { name: 'app', dur: 1.7344 },
        { name: 'cache', desc: 'say "hi" \\o/' },
      ]),
    ).toBe('waf;dur=0.012;desc="pass/enforce", app;dur=1.734, cache;desc="say \\"hi\\" \\\\o/"');
    expect(serverTiming([])).toBe('');
  });
});
