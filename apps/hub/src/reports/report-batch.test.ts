/** The report batch's times: one form (UTC, `toISOString`'s) whatever zone and precision came. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ISO_TIME, utcTime } from './report-batch.js';

/** What the time is by definition: the pattern, then `Date` reading and writing it. */
const byDate = (value: string) => {
  const ms = Date.parse(value);
  return ISO_TIME.test(value) && !Number.isNaN(ms) ? new Date(ms).toISOString() : undefined;
};

describe('report times', () => {
  it('keeps a time already in UTC as the client wrote it', () => {
    expect(utcTime('2026-12-05T21:40:22.123Z')).toBe('2026-12-05T21:40:22.123Z');
  });

  it('writes other zones, precisions and rolled-over days in UTC', () => {
    expect(utcTime('2026-12-05T22:40:22+01:00')).toBe('2026-12-05T21:40:22.000Z');
    expect(utcTime('2026-12-05T21:40:22.123456Z')).toBe('2026-12-05T21:40:22.123Z');
    expect(utcTime('2026-02-30T00:00:00.000Z')).toBe('2026-03-02T00:00:00.000Z');
    expect(utcTime('2026-12-05T24:00:00.000Z')).toBe('2026-12-06T00:00:00.000Z');
  });

  it('refuses what is not an ISO 8601 date-time with a zone', () => {
    for (const bad of ['', '2026-12-05', '2026-12-05T21:40:22', '2026-13-01T00:00:00Z', 17, null])
      expect(utcTime(bad)).toBeUndefined();
  });

  it('agrees with Date on any time, in any of the forms the pattern accepts', () => {
    const time = fc
      .date({
        min: new Date('0000-01-01T00:00:00Z'),
        max: new Date('9999-12-31T23:59:59Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
    const zone = fc.constantFrom('Z', '+00:00', '+05:30', '-11:00');
    const fraction = fc.constantFrom('', '.5', '.123', '.123456789');
    const variant = fc
      .tuple(time, zone, fraction, fc.integer({ min: 1, max: 31 }))
      .map(
        ([iso, z, f, day]) =>
          `${iso.slice(0, 8)}${String(day).padStart(2, '0')}${iso.slice(10, 19)}${f}${z}`,
      );
    fc.assert(
      fc.property(fc.oneof(time, variant, fc.stringMatching(ISO_TIME)), (value) => {
        expect(utcTime(value)).toBe(byDate(value));
      }),
      { numRuns: 2000 },
    );
  });
});
