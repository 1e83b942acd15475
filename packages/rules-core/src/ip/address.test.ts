import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeParseFailure,
  formatIp,
  formatIpv4,
  formatIpv6,
  type IpAddress,
  IpParseError,
  ipFromBigInt,
  ipToBigInt,
  isIp,
  parseIp,
  parseIpInto,
} from './address.js';

const v6 = (...words: [number, number, number, number]): IpAddress => ({ family: 6, words });
const v4 = (a: number, b: number, c: number, d: number): IpAddress => ({
  family: 4,
  value: ((a << 24) | (b << 16) | (c << 8) | d) >>> 0,
});

/** The reason parseIp gives for `text`, or undefined when it parses. */
function reasonFor(text: string): string | undefined {
  try {
    parseIp(text);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(IpParseError);
    return (error as IpParseError).reason;
  }
}

describe('parseIp: IPv4', () => {
  it.each([
    ['0.0.0.0', v4(0, 0, 0, 0)],
    ['1.2.3.4', v4(1, 2, 3, 4)],
    ['10.0.0.5', v4(10, 0, 0, 5)],
    ['255.255.255.255', v4(255, 255, 255, 255)],
  ])('parses %s', (text, expected) => {
    expect(parseIp(text)).toEqual(expected);
  });
});

describe('parseIp: IPv6 textual forms all reach the same value', () => {
  it.each([
    ['full form', '2001:0db8:0000:0000:0000:0000:0000:0001', v6(0x20010db8, 0, 0, 1)],
    ['full form without leading zeros', '2001:db8:0:0:0:0:0:1', v6(0x20010db8, 0, 0, 1)],
    ['compressed in the middle', '2001:db8::1', v6(0x20010db8, 0, 0, 1)],
    ['compressed at the start', '::1', v6(0, 0, 0, 1)],
    ['compressed at the end', '2001:db8::', v6(0x20010db8, 0, 0, 0)],
    ['compressing a single group', '1:2:3:4:5:6:7::', v6(0x10002, 0x30004, 0x50006, 0x70000)],
    ['the unspecified address', '::', v6(0, 0, 0, 0)],
    ['upper case', '2001:DB8::ABCD', v6(0x20010db8, 0, 0, 0xabcd)],
    ['mixed case', '2001:Db8::aBcD', v6(0x20010db8, 0, 0, 0xabcd)],
    [
      'all ones',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      v6(-1 >>> 0, -1 >>> 0, -1 >>> 0, -1 >>> 0),
    ],
    ['embedded dotted quad', '64:ff9b::192.0.2.33', v6(0x0064ff9b, 0, 0, 0xc0000221)],
    [
      'full form with dotted quad',
      '1:2:3:4:5:6:1.2.3.4',
      v6(0x10002, 0x30004, 0x50006, 0x01020304),
    ],
  ])('%s: %s', (_, text, expected) => {
    expect(parseIp(text)).toEqual(expected);
  });

  it('defect 4: differently written equal addresses are equal (no string comparison)', () => {
    const upperFull = parseIp('2600:1f18:24e6:3d00:0000:0000:0000:0001'.toUpperCase());
    const compressed = parseIp('2600:1f18:24e6:3d00::1');
    expect(upperFull).toEqual(compressed);
    expect(parseIp('2600:1F18:24E6:3D00:0000:0000:0000:0001')).toEqual(compressed);
    expect(formatIp(upperFull)).toBe('2600:1f18:24e6:3d00::1');
  });
});

describe('parseIp: IPv4-mapped and IPv4-compatible IPv6', () => {
  it.each(['::ffff:1.2.3.4', '::FFFF:1.2.3.4', '::ffff:102:304', '0:0:0:0:0:ffff:0102:0304'])(
    'IPv4-mapped %s is the IPv4 address 1.2.3.4',
    (text) => {
      expect(parseIp(text)).toEqual(v4(1, 2, 3, 4));
    },
  );

  it('the mapped block boundaries are IPv4 0.0.0.0 and 255.255.255.255', () => {
    expect(parseIp('::ffff:0:0')).toEqual(v4(0, 0, 0, 0));
    expect(parseIp('::ffff:ffff:ffff')).toEqual(v4(255, 255, 255, 255));
    // Just outside the block on either side stays IPv6.
    expect(parseIp('::fffe:ffff:ffff')).toEqual(v6(0, 0, 0xfffe, -1 >>> 0));
    expect(parseIp('::1:0:0:0')).toEqual(v6(0, 0, 0x10000, 0));
  });

  it.each(['::1.2.3.5', '::102:305'])(
    'defect 3: IPv4-compatible %s stays IPv6 and is not 1.2.3.5',
    (text) => {
      const parsed = parseIp(text);
      expect(parsed).toEqual(v6(0, 0, 0, 0x01020305));
      expect(parsed).not.toEqual(parseIp('1.2.3.5'));
      expect(ipToBigInt(parsed)).toBe(0x01020305n); // same integer, but a different family
    },
  );
});

describe('parseIp: rejections name the reason', () => {
  it.each([
    ['', 'empty string'],
    ['fe80::1%eth0', 'zone ids'],
    ['fe80::1%25eth0', 'zone ids'],
    ['1.2.3.4%eth0', 'zone ids'],
    ['256.0.0.1', 'greater than 255'],
    ['1.2.3.999', 'greater than 255'],
    ['1.2.3.1000', 'greater than 255'],
    ['::ffff:1.2.3.256', 'greater than 255'],
    ['01.2.3.4', 'leading zero'],
    ['1.2.3.04', 'leading zero'],
    ['1.2.3.00', 'leading zero'],
    ['::ffff:1.02.3.4', 'leading zero'],
    [' 1.2.3.4', 'whitespace'],
    ['1.2.3.4 ', 'whitespace'],
    ['\t::1', 'whitespace'],
    ['::1\n', 'whitespace'],
    ['x1.2.3.4', 'not a dotted-quad'],
    ['1.2.3.4x', 'not a dotted-quad'],
    ['1.2.3.4.5', 'not a dotted-quad'],
    ['1.2.3', 'not a dotted-quad'],
    ['1.2.3.', 'not a dotted-quad'],
    ['1..2.3', 'not a dotted-quad'],
    ['1.2.3.4/32', 'not a dotted-quad'],
    ['::1x', 'not a dotted-quad'],
    ['g::1', 'not a dotted-quad'],
    [':1::', 'not a dotted-quad'],
    ['1::2:', 'not a dotted-quad'],
    ['1:2:3:4:5:6:7:8:', 'not a dotted-quad'],
    ['1:::2', 'not a dotted-quad'],
    ['1:2:3:4:5:6:7', 'wrong number of IPv6 groups'],
    ['1:2:3:4:5:6:7:8:9', 'wrong number of IPv6 groups'],
    ['1::2:3:4:5:6:7:8', 'wrong number of IPv6 groups'],
    ['::1:2:3:4:5:6:7:8', 'wrong number of IPv6 groups'],
    ['1:2:3:4:5:6:7:1.2.3.4', 'wrong number of IPv6 groups'],
    ['1:2:3:4:5:1.2.3.4', 'wrong number of IPv6 groups'],
    ['1::2::3', '"::" may appear only once'],
    ['::1::', '"::" may appear only once'],
    ['12345::1', 'more than 4 hex digits'],
    ['::00001', 'more than 4 hex digits'],
  ])('%j is rejected: %s', (text, reason) => {
    expect(reasonFor(text)).toContain(reason);
    expect(isIp(text)).toBe(false);
    expect(parseIpInto(text, new Uint32Array(4))).toBeLessThan(0);
  });

  it('the error message quotes the input and the reason', () => {
    expect(() => parseIp('fe80::1%eth0')).toThrow(
      'invalid IP address "fe80::1%eth0": zone ids (%...) are not allowed',
    );
  });

  it('describes an unknown failure code without throwing', () => {
    expect(describeParseFailure(-1000)).toBe('unparseable');
  });
});

describe('formatting', () => {
  it.each([
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // first of two equal runs
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // the longest run, not the first
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['::1.2.3.5', '::102:305'],
  ])('%s formats as %s', (text, canonical) => {
    expect(formatIp(parseIp(text))).toBe(canonical);
  });

  it('formats IPv4 as a dotted quad', () => {
    expect(formatIpv4(0)).toBe('0.0.0.0');
    expect(formatIpv4(0xffffffff)).toBe('255.255.255.255');
    expect(formatIpv4(0x0a000005)).toBe('10.0.0.5');
  });
});

// --- Properties -------------------------------------------------------------------------------

const uint32 = fc.nat({ max: 0xffffffff });
/** Groups biased towards zero so zero runs of every length (and compression choices) occur. */
const group = fc.oneof(fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff }));
const eightGroups = fc.array(group, { minLength: 8, maxLength: 8 });

function wordsOf(g: readonly number[]): [number, number, number, number] {
  const w = (k: number) => (((g[2 * k] as number) << 16) | (g[2 * k + 1] as number)) >>> 0;
  return [w(0), w(1), w(2), w(3)];
}

/** What parsing the IPv6 text of `words` must give: IPv4 for the mapped block. */
function expectedAddress(words: [number, number, number, number]): IpAddress {
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff)
    return { family: 4, value: words[3] };
  return { family: 6, words };
}

/** The zero runs (start, length) of eight groups. */
function zeroRuns(g: readonly number[]): { start: number; length: number }[] {
  const runs: { start: number; length: number }[] = [];
  for (let k = 0; k < g.length; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let end = k;
    while (end < g.length && g[end] === 0) end++;
    runs.push({ start: k, length: end - k });
    k = end;
  }
  return runs;
}

/** An arbitrary valid spelling of eight groups: case, zero padding, compression, dotted tail. */
const spelling = eightGroups.chain((g) =>
  fc
    .record({
      upper: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      pad: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
      compress: fc.option(fc.nat(), { nil: undefined }),
      dottedTail: fc.boolean(),
    })
    .map(({ upper, pad, compress, dottedTail }) => {
      const parts = g.map((x, k) => {
        const hex = x
          .toString(16)
          .padStart(Math.min(4, x.toString(16).length + (pad[k] as number)), '0');
        return upper[k] ? hex.toUpperCase() : hex;
      });
      let groupCount = 8;
      if (dottedTail) {
        const tail = ((g[6] as number) << 16) | (g[7] as number);
        parts.splice(6, 2, formatIpv4(tail >>> 0));
        groupCount = 6; // compression may only cover the hex groups
      }
      // Compress any zero run (or a prefix of it) among the hex groups.
      const runs = zeroRuns(g.slice(0, groupCount));
      const run =
        compress === undefined || runs.length === 0 ? undefined : runs[compress % runs.length];
      if (run) {
        const length = 1 + ((compress as number) % run.length);
        const left = parts.slice(0, run.start).join(':');
        const right = parts.slice(run.start + length).join(':');
        return { groups: g, text: `${left}::${right}` };
      }
      return { groups: g, text: parts.join(':') };
    }),
);

describe('properties', () => {
  it('IPv4 round-trips through formatIpv4 and parseIp', () => {
    fc.assert(
      fc.property(uint32, (value) => {
        expect(parseIp(formatIpv4(value))).toEqual({ family: 4, value });
        expect(ipFromBigInt(4, ipToBigInt({ family: 4, value }))).toEqual({ family: 4, value });
      }),
    );
  });

  it('IPv6 round-trips through formatIpv6 and parseIp (the mapped block becoming IPv4)', () => {
    fc.assert(
      fc.property(eightGroups, (g) => {
        const words = wordsOf(g);
        const parsed = parseIp(formatIpv6(words));
        expect(parsed).toEqual(expectedAddress(words));
        if (parsed.family === 6) expect(ipFromBigInt(6, ipToBigInt(parsed))).toEqual(parsed);
      }),
      { numRuns: 500 },
    );
  });

  it('every spelling of one IPv6 value parses equal', () => {
    fc.assert(
      fc.property(spelling, ({ groups, text }) => {
        expect(parseIp(text), text).toEqual(expectedAddress(wordsOf(groups)));
        // and the canonical form is the same whatever spelling we came from
        expect(formatIp(parseIp(text))).toBe(formatIp(expectedAddress(wordsOf(groups))));
      }),
      { numRuns: 1000 },
    );
  });

  it('formatIpv6 output is RFC 5952 canonical', () => {
    fc.assert(
      fc.property(eightGroups, (g) => {
        const text = formatIpv6(wordsOf(g));
        expect(text).toBe(text.toLowerCase());
        expect(text.split('::').length).toBeLessThanOrEqual(2);
        expect(text).not.toContain(':::');
        const halves = text.split('::');
        const explicit = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
        for (const part of explicit) expect(part).toMatch(/^(0|[1-9a-f][0-9a-f]{0,3})$/);
        const runs = zeroRuns(g);
        const longest = Math.max(0, ...runs.map((r) => r.length));
        if (longest < 2) {
          // nothing to compress, and a single zero group is never compressed
          expect(halves).toHaveLength(1);
          expect(explicit).toHaveLength(8);
        } else {
          // the first longest run is the one compressed
          expect(halves).toHaveLength(2);
          const first = runs.find((r) => r.length === longest) as { start: number };
          expect(explicit).toHaveLength(8 - longest);
          expect((halves[0] as string) === '' ? 0 : (halves[0] as string).split(':').length).toBe(
            first.start,
          );
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('parseIpInto never throws and returns 4, 6 or a described negative code', () => {
    const out = new Uint32Array(4);
    const check = (text: string) => {
      const r = parseIpInto(text, out);
      if (r < 0) {
        expect(describeParseFailure(r)).not.toBe('unparseable');
        expect(() => parseIp(text)).toThrow(IpParseError);
      } else {
        expect([4, 6]).toContain(r);
      }
    };
    fc.assert(fc.property(fc.string(), check), { numRuns: 2000 });
    const ipChar = fc.constantFrom(...'0123456789abcdefABCDEF:.%/ ');
    fc.assert(fc.property(fc.string({ unit: ipChar, maxLength: 45 }), check), { numRuns: 5000 });
  });

  it('agrees with node:net on which strings are addresses (zone ids aside)', () => {
    const piece = fc.oneof(
      fc.constantFrom('', '0', '1', 'ffff', 'FFFF', '00000', '12345', 'g'),
      group.map((x) => x.toString(16)),
      fc.tuple(fc.nat(300), fc.nat(300), fc.nat(300), fc.nat(300)).map((o) => o.join('.')),
      fc.constantFrom('1.2.3', '01.2.3.4', '1.2.3.4.5'),
    );
    const candidate = fc.array(piece, { minLength: 1, maxLength: 10 }).map((p) => p.join(':'));
    fc.assert(
      fc.property(candidate, (text) => {
        expect(isIp(text), text).toBe(isIP(text) !== 0);
        if (isIp(text)) {
          const r = parseIpInto(text, new Uint32Array(4));
          // node:net reports the written family; mapped IPv6 is IPv4 for us.
          if (isIP(text) === 4) expect(r).toBe(4);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
