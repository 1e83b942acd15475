/**
 * IP address parsing and formatting.
 *
 * One address has one representation, whatever text it came from. That is the fix for the
 * anchor's defects 3 and 4 (WAF-SPEC): addresses are compared as numbers, never as strings, and
 * IPv4 and IPv6 never share a number space.
 *
 * - IPv4 is a uint32 (`family: 4`).
 * - IPv6 is four big-endian uint32 words (`family: 6`).
 * - IPv4-mapped IPv6 (`::ffff:a.b.c.d`, in any textual form) IS the IPv4 address: the same client
 *   reaches a dual-stack socket that way, and a rule on the IPv4 address must catch it.
 * - IPv4-compatible IPv6 (`::a.b.c.d`, deprecated by RFC 4291) is NOT IPv4: it stays family 6.
 *
 * The request path calls {@link parseIpInto}, which allocates nothing and throws nothing; the
 * build path calls {@link parseIp}, which throws {@link IpParseError} naming the reason.
 */

export type IpFamily = 4 | 6;

export interface Ipv4Address {
  readonly family: 4;
  /** The address as an unsigned 32-bit integer. */
  readonly value: number;
}

export interface Ipv6Address {
  readonly family: 6;
  /** Four big-endian 32-bit words, most significant first. */
  readonly words: readonly [number, number, number, number];
}

export type IpAddress = Ipv4Address | Ipv6Address;

/** Thrown by {@link parseIp} with the offending text and a reason a person can act on. */
export class IpParseError extends Error {
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`invalid IP address ${JSON.stringify(input)}: ${reason}`);
    this.name = 'IpParseError';
  }
}

/** Failure codes of the allocation-free parser; `REASONS` turns them into messages. */
enum Fail {
  Empty = -1,
  Zone = -2,
  Octet = -3,
  LeadingZero = -4,
  Syntax = -5,
  GroupTooLong = -6,
  GroupCount = -7,
  DoubleColon = -8,
  Whitespace = -9,
}

const REASONS: Record<number, string> = {
  [Fail.Empty]: 'empty string',
  [Fail.Zone]: 'zone ids (%...) are not allowed',
  [Fail.Octet]: 'an IPv4 octet is greater than 255',
  [Fail.LeadingZero]: 'an IPv4 octet has a leading zero (ambiguous: octal or decimal?)',
  [Fail.Syntax]: 'not a dotted-quad IPv4 or a colon-separated IPv6 address',
  [Fail.GroupTooLong]: 'an IPv6 group has more than 4 hex digits',
  [Fail.GroupCount]: 'wrong number of IPv6 groups',
  [Fail.DoubleColon]: '"::" may appear only once',
  [Fail.Whitespace]: 'leading or trailing whitespace',
};

/**
 * Parses `text` into `out` without allocating. Returns the family (4 or 6) on success, with
 * `out[0]` holding the IPv4 value or `out[0..3]` the IPv6 words; returns a negative failure code
 * otherwise (pass it to {@link describeParseFailure}).
 */
export function parseIpInto(text: string, out: Uint32Array): number {
  const n = text.length;
  if (n === 0) return Fail.Empty;
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(n - 1);
  if (first <= 32 || last <= 32) return Fail.Whitespace;
  if (text.indexOf(':') === -1) {
    const v = parseIpv4Part(text, 0, n);
    if (v < 0) return v;
    out[0] = v;
    return 4;
  }
  const r = parseIpv6(text, out);
  if (r < 0) return r;
  // IPv4-mapped (::ffff:0:0/96) is the IPv4 address itself.
  if (out[0] === 0 && out[1] === 0 && out[2] === 0xffff) {
    out[0] = out[3] as number;
    return 4;
  }
  return 6;
}

/** The human reason for a failure code returned by {@link parseIpInto}. */
export function describeParseFailure(code: number): string {
  return REASONS[code] ?? 'unparseable';
}

/** Parses an address in any textual form; throws {@link IpParseError} on bad input. */
export function parseIp(text: string): IpAddress {
  const out = new Uint32Array(4);
  const r = parseIpInto(text, out);
  if (r === 4) return { family: 4, value: out[0] as number };
  if (r === 6) {
    return {
      family: 6,
      words: [out[0] as number, out[1] as number, out[2] as number, out[3] as number],
    };
  }
  throw new IpParseError(text, describeParseFailure(r));
}

/** True when `text` parses as an address. */
export function isIp(text: string): boolean {
  return parseIpInto(text, scratch) > 0;
}
const scratch = new Uint32Array(4);

/** Parses a dotted quad in text[from, to); returns the value or a negative failure code. */
function parseIpv4Part(text: string, from: number, to: number): number {
  let value = 0;
  let octets = 0;
  let i = from;
  while (i <= to) {
    let octet = 0;
    let digits = 0;
    const start = i;
    while (i < to) {
      const c = text.charCodeAt(i);
      if (c < 48 || c > 57) break;
      octet = octet * 10 + (c - 48);
      digits++;
      i++;
      if (digits > 3) return Fail.Octet;
    }
    if (digits === 0) return text.charCodeAt(i) === 37 ? Fail.Zone : Fail.Syntax;
    if (digits > 1 && text.charCodeAt(start) === 48) return Fail.LeadingZero;
    if (octet > 255) return Fail.Octet;
    value = value * 256 + octet;
    octets++;
    if (i === to) break;
    const c = text.charCodeAt(i);
    if (c === 37) return Fail.Zone;
    if (c !== 46 || octets === 4) return Fail.Syntax;
    i++;
  }
  if (octets !== 4) return Fail.Syntax;
  return value;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

const groups = new Uint16Array(8);

/** Parses an IPv6 address (with optional trailing dotted quad) into four words. */
function parseIpv6(text: string, out: Uint32Array): number {
  const n = text.length;
  if (text.indexOf('%') !== -1) return Fail.Zone;
  let count = 0; // groups written
  let gap = -1; // index in `groups` where "::" stands
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return Fail.Syntax;
    gap = 0;
    i = 2;
    if (i === n) return finishIpv6(count, gap, out);
  }
  while (i < n) {
    // A group, or a trailing dotted quad.
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < n) {
      const h = hexValue(text.charCodeAt(i));
      if (h < 0) break;
      value = (value << 4) | h;
      digits++;
      i++;
    }
    if (i < n && text.charCodeAt(i) === 46) {
      if (count > 6) return Fail.GroupCount;
      const v4 = parseIpv4Part(text, start, n);
      if (v4 < 0) return v4;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      i = n;
      break;
    }
    if (digits === 0) return Fail.Syntax;
    if (digits > 4) return Fail.GroupTooLong;
    if (count === 8) return Fail.GroupCount;
    groups[count++] = value;
    if (i === n) break;
    if (text.charCodeAt(i) !== 58) return Fail.Syntax;
    i++;
    if (i < n && text.charCodeAt(i) === 58) {
      if (gap !== -1) return Fail.DoubleColon;
      gap = count;
      i++;
      if (i === n) break;
    } else if (i === n) {
      return Fail.Syntax; // trailing single colon
    }
  }
  return finishIpv6(count, gap, out);
}

function finishIpv6(count: number, gap: number, out: Uint32Array): number {
  if (gap === -1) {
    if (count !== 8) return Fail.GroupCount;
  } else {
    if (count > 7) return Fail.GroupCount;
    const tail = count - gap;
    for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k] as number;
    for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  }
  for (let w = 0; w < 4; w++) {
    out[w] = (((groups[2 * w] as number) << 16) | (groups[2 * w + 1] as number)) >>> 0;
  }
  return 6;
}

/** Formats an IPv4 value as a dotted quad. */
export function formatIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/** Formats IPv6 words in the RFC 5952 canonical form (lowercase, longest zero run compressed). */
export function formatIpv6(words: ArrayLike<number>): string {
  const g: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = words[w] as number;
    g.push(word >>> 16, word & 0xffff);
  }
  let bestStart = -1;
  let bestLen = 1; // RFC 5952: never compress a single group
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let end = k;
    while (end < 8 && g[end] === 0) end++;
    if (end - k > bestLen) {
      bestStart = k;
      bestLen = end - k;
    }
    k = end;
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(':');
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

/** Formats an address canonically: dotted quad for IPv4, RFC 5952 for IPv6. */
export function formatIp(address: IpAddress): string {
  return address.family === 4 ? formatIpv4(address.value) : formatIpv6(address.words);
}

/** The address as an integer in its family's space (IPv4 < 2^32, IPv6 < 2^128). */
export function ipToBigInt(address: IpAddress): bigint {
  if (address.family === 4) return BigInt(address.value);
  const [a, b, c, d] = address.words;
  return (BigInt(a) << 96n) | (BigInt(b) << 64n) | (BigInt(c) << 32n) | BigInt(d);
}

/** The inverse of {@link ipToBigInt}; `value` must fit the family. */
export function ipFromBigInt(family: IpFamily, value: bigint): IpAddress {
  if (family === 4) return { family: 4, value: Number(value) };
  const m = 0xffffffffn;
  return {
    family: 6,
    words: [
      Number((value >> 96n) & m),
      Number((value >> 64n) & m),
      Number((value >> 32n) & m),
      Number(value & m),
    ],
  };
}
