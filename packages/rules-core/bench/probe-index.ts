/**
 * The set of benchmark probe addresses, sorted so that "does this range contain any probe?" is
 * one binary search. The worst-case rule set uses it to generate block and reputation ranges that
 * no probe falls in: every probe must then be checked against every category and fall through
 * to `pass`, which is the slowest path through the evaluator.
 */
import { ipToBigInt, parseIp } from '@rampart/rules-core/ip/address';
import type { IpRange } from '@rampart/rules-core/ip/range';

export interface ProbeIndex {
  /** True when at least one probe address lies in `range`. */
  containsAny(range: IpRange): boolean;
}

/** Indexes `ips` (text, either family; IPv4-mapped IPv6 counts as IPv4). */
export function indexProbes(ips: Iterable<string>): ProbeIndex {
  const v4: number[] = [];
  const v6: bigint[] = [];
  for (const ip of ips) {
    const address = parseIp(ip);
    if (address.family === 4) v4.push(address.value);
    else v6.push(ipToBigInt(address));
  }
  const sorted4 = Float64Array.from(v4).sort();
  v6.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    containsAny(range) {
      if (range.family === 4)
        return firstAtLeast(sorted4, Number(range.start)) <= Number(range.end);
      const i = lowerBound(v6, range.start);
      return i < v6.length && (v6[i] as bigint) <= range.end;
    },
  };
}

/** The smallest element >= value, or +Infinity. */
function firstAtLeast(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length ? (sorted[lo] as number) : Number.POSITIVE_INFINITY;
}

/** The first index whose element is >= value. */
function lowerBound(sorted: readonly bigint[], value: bigint): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as bigint) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
