/**
 * Deterministic random IP sets for the lookup benchmark.
 *
 * The same seed gives the same addresses on every machine and every run, so the SQLite, Redis and
 * Rampart measurements see identical inputs in identical order (the seed article's protocol) and
 * results can be compared between runs. IPv4 and IPv6 are mixed in the proportion of the dataset.
 * IPv4 addresses are uniform over the whole space (most of it is announced, so most lookups hit);
 * uniform IPv6 addresses would almost never fall in announced space, so most are drawn inside a
 * randomly chosen dataset range and a minority uniformly in 2000::/3 (global unicast), which
 * mostly miss.
 */
import {
  formatIpv4,
  formatIpv6,
  type Ipv6Address,
  ipFromBigInt,
} from '@rampart/rules-core/ip/address';
import type { IpRange } from '@rampart/rules-core/ip/range';

/** A generator of uniform uint32 values. */
export type Uint32Source = () => number;

/** mulberry32: tiny, fast, good enough for picking benchmark inputs (not for cryptography). */
export function mulberry32(seed: number): Uint32Source {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform in [0, 1). */
export function unitFloat(next: Uint32Source): number {
  return next() / 2 ** 32;
}

/** Uniform integer in [0, n) for n <= 2^32. */
export function below(next: Uint32Source, n: number): number {
  return Math.floor(unitFloat(next) * n);
}

/** 128 random bits. */
function random128(next: Uint32Source): bigint {
  return (
    (BigInt(next()) << 96n) | (BigInt(next()) << 64n) | (BigInt(next()) << 32n) | BigInt(next())
  );
}

/** Uniform (up to a negligible modulo bias) in [range.start, range.end]. */
export function addressInRange(next: Uint32Source, range: IpRange): bigint {
  const size = range.end - range.start + 1n;
  return range.start + (random128(next) % size);
}

const GLOBAL_UNICAST: IpRange = { family: 6, start: 0x2n << 125n, end: (0x4n << 125n) - 1n };

export interface IpSetSource {
  /** Fraction of IPv4 addresses, in [0, 1]. */
  readonly v4Share: number;
  /** Announced IPv6 ranges to draw most IPv6 addresses from. */
  readonly v6Ranges: readonly IpRange[];
  /** Fraction of IPv6 addresses drawn inside `v6Ranges`; the rest are uniform in 2000::/3. */
  readonly v6AnnouncedShare: number;
}

/**
 * `size` addresses as canonical text, the same for the same seed, source and filter. Addresses
 * `accept` turns down are replaced by further draws (the worst-case rule set uses this to keep
 * probes out of the blocked countries and ASNs).
 */
export function generateIpSet(
  size: number,
  seed: number,
  source: IpSetSource,
  accept: (ip: string) => boolean = () => true,
): string[] {
  const next = mulberry32(seed);
  const ips: string[] = [];
  while (ips.length < size) {
    const ip = unitFloat(next) < source.v4Share ? formatIpv4(next()) : randomIpv6(next, source);
    if (accept(ip)) ips.push(ip);
  }
  return ips;
}

function randomIpv6(next: Uint32Source, source: IpSetSource): string {
  const announced = source.v6Ranges.length > 0 && unitFloat(next) < source.v6AnnouncedShare;
  const range = announced
    ? (source.v6Ranges[below(next, source.v6Ranges.length)] as IpRange)
    : GLOBAL_UNICAST;
  return formatAddress(6, addressInRange(next, range));
}

/** The share of IPv4 ranges among `ranges` (what {@link IpSetSource.v4Share} should be). */
export function v4ShareOf(ranges: readonly IpRange[]): number {
  let v4 = 0;
  for (const r of ranges) if (r.family === 4) v4++;
  return ranges.length === 0 ? 1 : v4 / ranges.length;
}

/**
 * The first address of `size` ranges picked at random: the probe for the anchor's defect 1 (a
 * range's first address never matches), which uniformly random addresses rarely land on.
 */
export function rangeStartSet(size: number, seed: number, ranges: readonly IpRange[]): string[] {
  const next = mulberry32(seed);
  const ips: string[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const range = ranges[below(next, ranges.length)] as IpRange;
    ips[i] = formatAddress(range.family, range.start);
  }
  return ips;
}

function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return formatIpv4(Number(value));
  return formatIpv6((ipFromBigInt(6, value) as Ipv6Address).words);
}
