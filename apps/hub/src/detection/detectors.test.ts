/**
 * When a site's failed logins are a surge (`judgeSurge`): enough of them, from enough addresses,
 * and far above what a window of the site usually holds. The detectors' Redis side is covered
 * against the real hub in `integration/detection.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DETECTION_SETTINGS, type SurgeSettings } from './detection-settings.js';
import { judgeSurge } from './detectors.js';

const defaults = DEFAULT_DETECTION_SETTINGS.failedLoginSurge;

describe('judgeSurge', () => {
  it('is a surge from minFailures failures and minAddresses addresses on a quiet site', () => {
    expect(judgeSurge({ failures: 10, addresses: 5, baselineFailures: 10 }, defaults)).toEqual({
      surging: true,
      usual: 0.01, // 10 in a day is 0.007 a minute
    });
    expect(judgeSurge({ failures: 9, addresses: 9, baselineFailures: 9 }, defaults).surging).toBe(
      false,
    );
    expect(judgeSurge({ failures: 50, addresses: 4, baselineFailures: 50 }, defaults).surging).toBe(
      false,
    );
  });

  it('needs factor times the usual rate on a busy site', () => {
    // 14 400 failed logins a day are 10 a minute: a surge needs 50 within the minute.
    const busy = { addresses: 40, baselineFailures: 14_400 };
    expect(judgeSurge({ ...busy, failures: 49 }, defaults)).toEqual({ surging: false, usual: 10 });
    expect(judgeSurge({ ...busy, failures: 50 }, defaults).surging).toBe(true);
  });

  const settings = fc.record<SurgeSettings>({
    enabled: fc.constant(true),
    mode: fc.constantFrom('enforce', 'monitor'),
    action: fc.constantFrom('block', 'rate_limit'),
    minFailures: fc.integer({ min: 1, max: 1000 }),
    minAddresses: fc.integer({ min: 1, max: 1000 }),
    factor: fc.double({ min: 1, max: 1000, noNaN: true }),
    baselineSeconds: fc.integer({ min: 60, max: 30 * 86_400 }),
    perAddress: fc.integer({ min: 1, max: 100 }),
    windowSeconds: fc.integer({ min: 1, max: 86_400 }),
    blockSeconds: fc.integer({ min: 1, max: 86_400 }),
  });
  const window = fc.record({
    failures: fc.nat(100_000),
    addresses: fc.nat(1000),
    baselineFailures: fc.nat(10_000_000),
  });

  it('more failures or addresses never end a surge; a busier baseline never starts one', () => {
    fc.assert(
      fc.property(settings, window, fc.nat(1000), (set, w, more) => {
        const before = judgeSurge(w, set).surging;
        if (before) {
          expect(judgeSurge({ ...w, failures: w.failures + more }, set).surging).toBe(true);
          expect(judgeSurge({ ...w, addresses: w.addresses + more }, set).surging).toBe(true);
        } else
          expect(
            judgeSurge({ ...w, baselineFailures: w.baselineFailures + more }, set).surging,
          ).toBe(false);
      }),
    );
  });

  it('never calls a window a surge below any of its three bounds', () => {
    fc.assert(
      fc.property(settings, window, (set, w) => {
        const { surging, usual } = judgeSurge(w, set);
        const exactUsual = (w.baselineFailures * set.windowSeconds) / set.baselineSeconds;
        expect(Math.abs(usual - exactUsual)).toBeLessThanOrEqual(0.005 + 1e-9);
        if (surging) {
          expect(w.failures).toBeGreaterThanOrEqual(set.minFailures);
          expect(w.addresses).toBeGreaterThanOrEqual(set.minAddresses);
          expect(w.failures).toBeGreaterThanOrEqual(set.factor * exactUsual);
        }
      }),
    );
  });
});
