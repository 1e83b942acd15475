/**
 * Inclusive IP ranges with a family marker, parsed from CIDR, start-end or single-address text.
 *
 * Ranges are built on the write path (snapshot builds, imports), so they use `bigint` for
 * clarity; the request path never sees them, it reads the packed tables made by
 * `evaluator/range-table`.
 */
import {
  formatIp,
  type IpFamily,
  IpParseError,
  ipFromBigInt,
  ipToBigInt,
  parseIp,
} from './address.js';

export interface IpRange {
  readonly family: IpFamily;
  /** First address of the range, inclusive. */
  readonly start: bigint;
  /** Last address of the range, inclusive. */
  readonly end: bigint;
}

/** Thrown for text that is not a CIDR, a start-end range or an address. */
export class IpRangeParseError extends Error {
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`invalid IP range ${JSON.stringify(input)}: ${reason}`);
    this.name = 'IpRangeParseError';
  }
}

const FAMILY_BITS = { 4: 32n, 6: 128n } as const;

/** The largest address of a family. */
export function familyMax(family: IpFamily): bigint {
  return (1n << FAMILY_BITS[family]) - 1n;
}

/** The IPv4-mapped block ::ffff:0:0/96, as IPv6 integers. */
const MAPPED_START = 0xffffn << 32n;
const MAPPED_END = MAPPED_START + 0xffffffffn;

/**
 * Parses `a.b.c.d/n`, `x::/n`, `start-end` or a single address into ranges.
 *
 * Returns an array because an IPv6 range that overlaps the IPv4-mapped block ::ffff:0:0/96 covers
 * IPv4 addresses too (a client reaching a dual-stack socket as ::ffff:1.2.3.4 is the IPv4 client
 * 1.2.3.4): that part is split off as an IPv4 range so IPv4 lookups see it. Every other input
 * yields exactly one range.
 *
 * CIDRs with host bits set (`10.0.0.1/8`) are rejected: the writer of such a rule usually meant
 * either the network or the host, and guessing would silently widen or narrow a block.
 */
export function parseIpRange(text: string): IpRange[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new IpRangeParseError(text, 'empty string');
  const slash = trimmed.indexOf('/');
  if (slash !== -1) return normalizeRange(parseCidr(text, trimmed, slash));
  const dash = trimmed.indexOf('-');
  if (dash !== -1) {
    const start = parseAddress(text, trimmed.slice(0, dash).trim());
    const end = parseAddress(text, trimmed.slice(dash + 1).trim());
    if (start.family !== end.family) {
      throw new IpRangeParseError(text, 'start and end are of different IP families');
    }
    if (start.value > end.value) throw new IpRangeParseError(text, 'start is after end');
    return normalizeRange({ family: start.family, start: start.value, end: end.value });
  }
  const single = parseAddress(text, trimmed);
  return normalizeRange({ family: single.family, start: single.value, end: single.value });
}

/**
 * Parses one address in the family it is written in: an IPv4-mapped address written in IPv6 form
 * keeps its IPv6 value, so `::-::ffff:1.2.3.4` is one IPv6 range (split by {@link normalizeRange})
 * rather than a mix of families.
 */
function parseAddress(input: string, part: string): { family: IpFamily; value: bigint } {
  try {
    const address = parseIp(part);
    const value = ipToBigInt(address);
    if (address.family === 4 && part.includes(':'))
      return { family: 6, value: value + MAPPED_START };
    return { family: address.family, value };
  } catch (error) {
    if (error instanceof IpParseError) throw new IpRangeParseError(input, error.message);
    throw error;
  }
}

function parseCidr(input: string, trimmed: string, slash: number): IpRange {
  const addressText = trimmed.slice(0, slash);
  const prefixText = trimmed.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) {
    throw new IpRangeParseError(
      input,
      `prefix length ${JSON.stringify(prefixText)} is not a number`,
    );
  }
  const prefix = Number(prefixText);
  // Parse as written: a mapped ::ffff:a.b.c.d/120 has an IPv6 prefix length even though the
  // address normalises to IPv4.
  const writtenFamily: IpFamily = addressText.includes(':') ? 6 : 4;
  const bits = Number(FAMILY_BITS[writtenFamily]);
  if (prefix > bits) {
    throw new IpRangeParseError(
      input,
      `prefix length ${prefix} exceeds ${bits} for IPv${writtenFamily}`,
    );
  }
  const value = parseAddress(input, addressText).value;
  const hostBits = BigInt(bits - prefix);
  const hostMask = (1n << hostBits) - 1n;
  if ((value & hostMask) !== 0n) {
    const network = value & ~hostMask;
    const suggestion = `${formatIp(ipFromBigInt(writtenFamily, network))}/${prefix}`;
    throw new IpRangeParseError(input, `host bits are set; did you mean ${suggestion}?`);
  }
  return { family: writtenFamily, start: value, end: value | hostMask };
}

/** Splits the IPv4-mapped part out of an IPv6 range (see {@link parseIpRange}). */
export function normalizeRange(range: IpRange): IpRange[] {
  if (range.family === 4 || range.end < MAPPED_START || range.start > MAPPED_END) return [range];
  const parts: IpRange[] = [];
  if (range.start < MAPPED_START)
    parts.push({ family: 6, start: range.start, end: MAPPED_START - 1n });
  const v4Start = range.start > MAPPED_START ? range.start - MAPPED_START : 0n;
  const v4End = range.end < MAPPED_END ? range.end - MAPPED_START : 0xffffffffn;
  parts.push({ family: 4, start: v4Start, end: v4End });
  if (range.end > MAPPED_END) parts.push({ family: 6, start: MAPPED_END + 1n, end: range.end });
  return parts;
}

/** Formats a range as `start-end` (or a single address when it holds one). */
export function formatIpRange(range: IpRange): string {
  const start = formatIp(ipFromBigInt(range.family, range.start));
  if (range.start === range.end) return start;
  return `${start}-${formatIp(ipFromBigInt(range.family, range.end))}`;
}

/** True when `range` contains the address. */
export function rangeContains(range: IpRange, family: IpFamily, value: bigint): boolean {
  return range.family === family && range.start <= value && value <= range.end;
}
