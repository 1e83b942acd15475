/**
 * fast-check arbitraries shared by the IP property tests.
 */
import fc from 'fast-check';
import type { IpRange } from '../ip/range.js';

/** The range between two points of one family, whichever comes first. */
export function between(family: 4 | 6, a: bigint, b: bigint): IpRange {
  return a <= b ? { family, start: a, end: b } : { family, start: b, end: a };
}

/** Ranges whose bounds are drawn from the given points, so that they overlap often. */
export function rangesBetween(
  v4Point: fc.Arbitrary<bigint>,
  v6Point: fc.Arbitrary<bigint>,
): fc.Arbitrary<IpRange> {
  return fc.oneof(
    fc.tuple(v4Point, v4Point).map(([a, b]) => between(4, a, b)),
    fc.tuple(v6Point, v6Point).map(([a, b]) => between(6, a, b)),
  );
}
