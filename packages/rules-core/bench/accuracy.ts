/**
 * Checks the anchor layout's answers against exact ones, so the benchmark reports not only how
 * fast the Wafris-style lookups are but how often they are wrong on real data.
 *
 * The exact answer comes from flattening the dataset (nested and overlapping ranges included)
 * into disjoint intervals labelled with every range that covers them (`ip/flatten.ts`), then a
 * binary search: an address "should match" when its interval has at least one label, and the
 * anchor's id is right when it is one of those labels.
 */
import { ipToBigInt, parseIp, parseIpInto } from '@rampart/rules-core/ip/address';
import { flattenRanges } from '@rampart/rules-core/ip/flatten';
import type { IpRange } from '@rampart/rules-core/ip/range';
import {
  labelsOfSet,
  lookupV4,
  lookupV6,
  packRanges,
  type RangeTable,
} from '@rampart/rules-core/ip/range-table';

/** Exact lookups over one table's ranges; labels are indices into the ranges. */
export interface ReferenceTable {
  /** The indices of every range containing `ip`, sorted (empty when none does). */
  covering(ip: string): Uint32Array;
  /** True when `ip` is the first address of one of the ranges containing it. */
  startsRange(ip: string): boolean;
}

const NONE = new Uint32Array(0);

/** Builds the exact lookup for `ranges` (range `i` is label `i`, as in the Wafris tables). */
export function buildReference(ranges: readonly IpRange[]): ReferenceTable {
  const table: RangeTable = packRanges(
    flattenRanges(ranges.map((range, label) => ({ range, label }))),
  );
  const words = new Uint32Array(4);
  const covering = (ip: string) => {
    const family = parseIpInto(ip, words);
    const set =
      family === 4
        ? lookupV4(table, words[0] as number)
        : family === 6
          ? lookupV6(table, words)
          : -1;
    return set === -1 ? NONE : labelsOfSet(table, set);
  };
  return {
    covering,
    startsRange(ip) {
      const value = ipToBigInt(parseIp(ip));
      return covering(ip).some((label) => (ranges[label] as IpRange).start === value);
    },
  };
}

export interface AccuracyCounts {
  readonly lookups: number;
  /** Addresses inside at least one range. */
  readonly shouldMatch: number;
  /** Inside a range, but the anchor found none (defects 1 and 2). */
  readonly falseNegatives: number;
  /** Of those, addresses that are the first of a containing range (defect 1); the rest are
   * addresses of a range that overlaps or contains another one (defect 2). */
  readonly falseNegativesAtRangeStart: number;
  /** Inside no range, but the anchor reported one. */
  readonly falsePositives: number;
  /** Inside a range, and the anchor reported a range that does not contain the address. */
  readonly wrongRange: number;
}

/**
 * Compares the anchor's ids for table `t` (`ids[i * stride + t]` for IP `i`) with the reference.
 */
export function compareWithReference(
  ips: readonly string[],
  ids: Int32Array,
  stride: number,
  t: number,
  reference: ReferenceTable,
): AccuracyCounts {
  let shouldMatch = 0;
  let falseNegatives = 0;
  let atStart = 0;
  let falsePositives = 0;
  let wrongRange = 0;
  ips.forEach((ip, i) => {
    const expected = reference.covering(ip);
    const got = ids[i * stride + t] as number;
    if (expected.length > 0) shouldMatch++;
    if (expected.length > 0 && got === -1) {
      falseNegatives++;
      if (reference.startsRange(ip)) atStart++;
    } else if (expected.length === 0 && got !== -1) falsePositives++;
    else if (got !== -1 && !expected.includes(got)) wrongRange++;
  });
  return {
    lookups: ips.length,
    shouldMatch,
    falseNegatives,
    falseNegativesAtRangeStart: atStart,
    falsePositives,
    wrongRange,
  };
}

/** Adds counts field by field. */
export function addCounts(a: AccuracyCounts, b: AccuracyCounts): AccuracyCounts {
  return {
    lookups: a.lookups + b.lookups,
    shouldMatch: a.shouldMatch + b.shouldMatch,
    falseNegatives: a.falseNegatives + b.falseNegatives,
    falseNegativesAtRangeStart: a.falseNegativesAtRangeStart + b.falseNegativesAtRangeStart,
    falsePositives: a.falsePositives + b.falsePositives,
    wrongRange: a.wrongRange + b.wrongRange,
  };
}

export const ZERO_COUNTS: AccuracyCounts = {
  lookups: 0,
  shouldMatch: 0,
  falseNegatives: 0,
  falseNegativesAtRangeStart: 0,
  falsePositives: 0,
  wrongRange: 0,
};
