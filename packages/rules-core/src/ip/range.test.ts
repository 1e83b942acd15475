import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIp, type IpFamily, ipFromBigInt, ipToBigInt, parseIp } from './address.js';
import {
  familyMax,
  formatIpRange,
  type IpRange,
  IpRangeParseError,
  normalizeRange,
  parseIpRange,
  rangeContains,
} from './range.js';

const MAPPED_START = 0xffffn << 32n;
const MAPPED_END = MAPPED_START + 0xffffffffn;
const V6_MAX = (1n << 128n) - 1n;

const r4 = (start: bigint, end: bigint): IpRange => ({ family: 4, start, end });
const r6 = (start: bigint, end: bigint): IpRange => ({ family: 6, start, end });
const ip = (text: string) => ipToBigInt(parseIp(text));

function reasonFor(text: string): string {
  try {
    parseIpRange(text);
  } catch (error) {
    expect(error).toBeInstanceOf(IpRangeParseError);
    return (error as IpRangeParseError).reason;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

/** True when one of `ranges` contains the address written as `text` (parsed as a client IP). */
function containsText(ranges: readonly IpRange[], text: string): boolean {
  const address = parseIp(text);
  return ranges.some((r) => rangeContains(r, address.family, ipToBigInt(address)));
}

describe('parseIpRange: CIDR', () => {
  it.each([
    ['10.0.0.0/8', r4(ip('10.0.0.0'), ip('10.255.255.255'))],
    ['1.2.3.4/32', r4(ip('1.2.3.4'), ip('1.2.3.4'))],
    ['0.0.0.0/0', r4(0n, 0xffffffffn)],
    ['192.168.1.128/25', r4(ip('192.168.1.128'), ip('192.168.1.255'))],
    ['2001:db8::/32', r6(ip('2001:db8::'), ip('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'))],
    ['2001:DB8::1/128', r6(ip('2001:db8::1'), ip('2001:db8::1'))],
    ['2001:db8::/48', r6(ip('2001:db8::'), ip('2001:db8:0:ffff:ffff:ffff:ffff:ffff'))],
    ['10.0.0.0/08', r4(ip('10.0.0.0'), ip('10.255.255.255'))],
    ['  10.0.0.0/8  ', r4(ip('10.0.0.0'), ip('10.255.255.255'))],
  ])('%s', (text, expected) => {
    expect(parseIpRange(text)).toEqual([expected]);
  });

  it('::/0 covers everything, split around the IPv4-mapped block', () => {
    expect(parseIpRange('::/0')).toEqual([
      r6(0n, MAPPED_START - 1n),
      r4(0n, 0xffffffffn),
      r6(MAPPED_END + 1n, V6_MAX),
    ]);
  });

  it('a CIDR inside the mapped block is an IPv4 range, with an IPv6 prefix length', () => {
    expect(parseIpRange('::ffff:10.0.0.0/104')).toEqual([r4(ip('10.0.0.0'), ip('10.255.255.255'))]);
    expect(parseIpRange('::ffff:0:0/96')).toEqual([r4(0n, 0xffffffffn)]);
    expect(parseIpRange('::ffff:1.2.3.4/128')).toEqual([r4(ip('1.2.3.4'), ip('1.2.3.4'))]);
  });

  it('a CIDR around the mapped block keeps its IPv6 parts', () => {
    // ::/80 ends at ::ffff:ffff:ffff, so the mapped block is its tail.
    expect(parseIpRange('::/80')).toEqual([r6(0n, MAPPED_START - 1n), r4(0n, 0xffffffffn)]);
  });

  it('IPv4-compatible CIDRs stay IPv6 (defect 3)', () => {
    expect(parseIpRange('::1.2.3.0/120')).toEqual([r6(0x01020300n, 0x010203ffn)]);
  });

  it.each([
    ['10.0.0.1/8', 'host bits are set; did you mean 10.0.0.0/8?'],
    ['192.168.1.1/24', 'did you mean 192.168.1.0/24?'],
    ['2001:db8::1/32', 'did you mean 2001:db8::/32?'],
    ['::ffff:10.0.0.1/104', 'did you mean ::ffff:a00:0/104?'],
    ['10.0.0.0/33', 'prefix length 33 exceeds 32 for IPv4'],
    ['2001:db8::/129', 'prefix length 129 exceeds 128 for IPv6'],
    ['::ffff:1.2.3.4/33', 'did you mean'], // an IPv6 prefix length, so 33 is allowed but wide
    ['10.0.0.0/x', 'prefix length "x" is not a number'],
    ['10.0.0.0/', 'prefix length "" is not a number'],
    ['10.0.0.0/-1', 'is not a number'],
    ['10.0.0.0/8.0', 'is not a number'],
    ['10.0.0.0/1000', 'is not a number'],
    ['10.0.0.0/8/8', 'is not a number'],
    ['10.0.0/8', 'not a dotted-quad'],
    ['fe80::%eth0/64', 'zone ids'],
    ['', 'empty string'],
    ['   ', 'empty string'],
  ])('%j is rejected: %s', (text, reason) => {
    expect(reasonFor(text)).toContain(reason);
  });

  it('the error message quotes the input', () => {
    expect(() => parseIpRange('10.0.0.1/8')).toThrow(
      'invalid IP range "10.0.0.1/8": host bits are set; did you mean 10.0.0.0/8?',
    );
  });
});

describe('parseIpRange: start-end and single addresses', () => {
  it.each([
    ['10.0.0.5-10.0.0.9', [r4(ip('10.0.0.5'), ip('10.0.0.9'))]],
    ['10.0.0.5 - 10.0.0.9', [r4(ip('10.0.0.5'), ip('10.0.0.9'))]],
    ['10.0.0.5-10.0.0.5', [r4(ip('10.0.0.5'), ip('10.0.0.5'))]],
    ['2001:db8::1-2001:db8::ff', [r6(ip('2001:db8::1'), ip('2001:db8::ff'))]],
    ['::ffff:1.2.3.4-::ffff:1.2.3.9', [r4(ip('1.2.3.4'), ip('1.2.3.9'))]],
    ['1.2.3.4', [r4(ip('1.2.3.4'), ip('1.2.3.4'))]],
    ['2001:DB8::1', [r6(ip('2001:db8::1'), ip('2001:db8::1'))]],
    ['::ffff:1.2.3.4', [r4(ip('1.2.3.4'), ip('1.2.3.4'))]],
    ['::1.2.3.4', [r6(0x01020304n, 0x01020304n)]],
  ])('%s', (text, expected) => {
    expect(parseIpRange(text)).toEqual(expected);
  });

  it('an IPv6 start-end range reaching into the mapped block is split, not rejected', () => {
    expect(parseIpRange('::-::ffff:1.2.3.4')).toEqual([
      r6(0n, MAPPED_START - 1n),
      r4(0n, ip('1.2.3.4')),
    ]);
    expect(parseIpRange('::ffff:255.255.255.0-::1:0:0:5')).toEqual([
      r4(ip('255.255.255.0'), 0xffffffffn),
      r6(MAPPED_END + 1n, MAPPED_END + 6n),
    ]);
  });

  it.each([
    ['10.0.0.9-10.0.0.5', 'start is after end'],
    ['2001:db8::2-2001:db8::1', 'start is after end'],
    ['10.0.0.1-2001:db8::1', 'different IP families'],
    ['2001:db8::1-10.0.0.1', 'different IP families'],
    ['1.2.3.4-::ffff:1.2.3.5', 'different IP families'],
    ['1.2.3.4-', 'empty string'],
    ['-1.2.3.4', 'empty string'],
    ['1.2.3.4-1.2.3.5-1.2.3.6', 'not a dotted-quad'],
    ['1.2.3.256', 'greater than 255'],
    ['01.2.3.4', 'leading zero'],
  ])('%j is rejected: %s', (text, reason) => {
    expect(reasonFor(text)).toContain(reason);
  });
});

describe('normalizeRange', () => {
  it('leaves IPv4 and IPv6 ranges away from the mapped block alone', () => {
    expect(normalizeRange(r4(1n, 2n))).toEqual([r4(1n, 2n)]);
    expect(normalizeRange(r6(0n, MAPPED_START - 1n))).toEqual([r6(0n, MAPPED_START - 1n)]);
    expect(normalizeRange(r6(MAPPED_END + 1n, V6_MAX))).toEqual([r6(MAPPED_END + 1n, V6_MAX)]);
  });

  it('turns the part inside the mapped block into IPv4', () => {
    expect(normalizeRange(r6(MAPPED_START + 5n, MAPPED_START + 9n))).toEqual([r4(5n, 9n)]);
    expect(normalizeRange(r6(MAPPED_START - 1n, MAPPED_START))).toEqual([
      r6(MAPPED_START - 1n, MAPPED_START - 1n),
      r4(0n, 0n),
    ]);
    expect(normalizeRange(r6(MAPPED_END, MAPPED_END + 1n))).toEqual([
      r4(0xffffffffn, 0xffffffffn),
      r6(MAPPED_END + 1n, MAPPED_END + 1n),
    ]);
  });
});

describe('formatIpRange', () => {
  it('writes start-end, or one address', () => {
    expect(formatIpRange(r4(ip('10.0.0.0'), ip('10.255.255.255')))).toBe('10.0.0.0-10.255.255.255');
    expect(formatIpRange(r4(ip('1.2.3.4'), ip('1.2.3.4')))).toBe('1.2.3.4');
    expect(formatIpRange(r6(ip('2001:db8::'), ip('2001:db8::ff')))).toBe('2001:db8::-2001:db8::ff');
  });
});

// --- Properties -------------------------------------------------------------------------------

const BITS = { 4: 32, 6: 128 } as const;

const v4Value = fc.bigInt({ min: 0n, max: 0xffffffffn });
/** IPv6 values, often near or inside the mapped block and near the ends of the space. */
const v6Value = fc.oneof(
  fc.bigInt({ min: 0n, max: V6_MAX }),
  fc.bigInt({ min: MAPPED_START - 0xffffn, max: MAPPED_END + 0xffffn }),
  fc.bigInt({ min: 0n, max: 0xffffffffffffn }),
  fc.bigInt({ min: V6_MAX - 0xffffn, max: V6_MAX }),
);
const familyValue = fc.oneof(
  v4Value.map((value) => ({ family: 4 as IpFamily, value })),
  v6Value.map((value) => ({ family: 6 as IpFamily, value })),
);

/** Maps a normalised range back into the written family's space (IPv4 parts of IPv6 input). */
function asWritten(family: IpFamily, range: IpRange): IpRange {
  if (family === 6 && range.family === 4) {
    return r6(range.start + MAPPED_START, range.end + MAPPED_START);
  }
  return range;
}

/** The text of the address `value` of `family`, or undefined when it is out of range. */
function addressText(family: IpFamily, value: bigint): string | undefined {
  if (value < 0n || value > familyMax(family)) return undefined;
  return formatIp(ipFromBigInt(family, value));
}

describe('properties', () => {
  it('a CIDR covers exactly 2^(bits - prefix) addresses from its network to its broadcast', () => {
    fc.assert(
      fc.property(familyValue, fc.nat(128), ({ family, value }, rawPrefix) => {
        const bits = BITS[family];
        const prefix = rawPrefix % (bits + 1);
        const hostMask = (1n << BigInt(bits - prefix)) - 1n;
        const network = value & ~hostMask;
        const broadcast = network | hostMask;
        const networkText = addressText(family, network) as string;
        const ranges = parseIpRange(`${networkText}/${prefix}`);

        const written = ranges
          .map((r) => asWritten(family, r))
          .sort((a, b) => (a.start < b.start ? -1 : 1));
        let size = 0n;
        let next = network;
        for (const r of written) {
          expect(r.start).toBeLessThanOrEqual(r.end);
          expect(r.start).toBe(next); // contiguous, no gaps or overlaps between the parts
          next = r.end + 1n;
          size += r.end - r.start + 1n;
        }
        expect(size).toBe(1n << BigInt(bits - prefix));
        expect(next - 1n).toBe(broadcast);

        expect(containsText(ranges, networkText)).toBe(true);
        expect(containsText(ranges, addressText(family, broadcast) as string)).toBe(true);
        const below = addressText(family, network - 1n);
        const above = addressText(family, broadcast + 1n);
        if (below !== undefined) expect(containsText(ranges, below)).toBe(false);
        if (above !== undefined) expect(containsText(ranges, above)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('a CIDR with host bits set is rejected, and the suggestion parses', () => {
    fc.assert(
      fc.property(familyValue, fc.nat(127), ({ family, value }, rawPrefix) => {
        const bits = BITS[family];
        const prefix = rawPrefix % bits; // < bits, so there is at least one host bit
        const hostMask = (1n << BigInt(bits - prefix)) - 1n;
        const withHost = (value & ~hostMask) | ((value & hostMask) === 0n ? 1n : value & hostMask);
        const text = `${addressText(family, withHost)}/${prefix}`;
        const reason = reasonFor(text);
        const suggestion = /did you mean (\S+)\?$/.exec(reason)?.[1] as string;
        expect(suggestion).toBeDefined();
        expect(
          containsText(parseIpRange(suggestion), addressText(family, withHost) as string),
        ).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('formatIpRange and parseIpRange round-trip (IPv6 ranges splitting as normalizeRange does)', () => {
    const range = fc.oneof(
      fc.tuple(v4Value, v4Value).map(([a, b]) => (a <= b ? r4(a, b) : r4(b, a))),
      fc.tuple(v6Value, v6Value).map(([a, b]) => (a <= b ? r6(a, b) : r6(b, a))),
    );
    fc.assert(
      fc.property(range, (r) => {
        const normalised = normalizeRange(r);
        expect(parseIpRange(formatIpRange(r))).toEqual(normalised);
        for (const part of normalised) expect(parseIpRange(formatIpRange(part))).toEqual([part]);
      }),
      { numRuns: 2000 },
    );
  });
});
