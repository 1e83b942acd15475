import { parseIpRange } from '@rampart/rules-core/ip/range';
import { describe, expect, it } from 'vitest';
import { buildReference, compareWithReference } from './accuracy.ts';

const ranges = ['10.0.0.0/8', '10.1.0.0/16', '2001:db8::/32'].flatMap(parseIpRange);

describe('accuracy against the exact lookup', () => {
  const reference = buildReference(ranges);

  it('lists every range containing an address, nested ones included', () => {
    expect([...reference.covering('10.1.2.3')]).toEqual([0, 1]);
    expect([...reference.covering('10.2.0.0')]).toEqual([0]);
    expect([...reference.covering('192.0.2.1')]).toEqual([]);
    expect(reference.startsRange('10.1.0.0')).toBe(true);
    expect(reference.startsRange('10.1.0.1')).toBe(false);
  });

  it('classifies anchor answers', () => {
    const ips = ['10.1.0.0', '10.200.0.1', '10.1.2.3', '192.0.2.1', '2001:db8::5', '2001:db8::6'];
    const ids = Int32Array.from([-1, -1, 1, 2, 2, 0]);
    expect(compareWithReference(ips, ids, 1, 0, reference)).toEqual({
      lookups: 6,
      shouldMatch: 5,
      falseNegatives: 2,
      falseNegativesAtRangeStart: 1,
      falsePositives: 1,
      wrongRange: 1,
    });
  });
});
