import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rangesBetween } from '../test-support/ip-arbitraries.js';
import { ipFromBigInt, parseIpInto } from './address.js';
import { flattenRanges, type LabelledRange } from './flatten.js';
import { type IpRange, parseIpRange, rangeContains } from './range.js';
import {
  labelSetCount,
  labelsOfAddress,
  labelsOfSet,
  lookupV4,
  lookupV6,
  packRanges,
  type RangeTable,
  rangeCount,
} from './range-table.js';

/** Builds a table from `[text, label]` pairs, as a snapshot build would. */
function tableOf(...rules: [string, number][]): RangeTable {
  const entries: LabelledRange[] = rules.flatMap(([text, label]) =>
    parseIpRange(text).map((range) => ({ range, label })),
  );
  return packRanges(flattenRanges(entries));
}

const scratch = new Uint32Array(4);

/** The labels for the client address `text` (parsed as the request path does), or undefined. */
function labelsFor(table: RangeTable, text: string): readonly number[] | undefined {
  const family = parseIpInto(text, scratch);
  if (family < 0) throw new Error(`bad address ${text}`);
  const index = family === 4 ? lookupV4(table, scratch[0] as number) : lookupV6(table, scratch);
  return index === -1 ? undefined : Array.from(labelsOfSet(table, index));
}

/** The label-set index for a family and integer value. */
function lookupBig(table: RangeTable, family: 4 | 6, value: bigint): number {
  const address = ipFromBigInt(family, value);
  if (address.family === 4) return lookupV4(table, address.value);
  return lookupV6(table, Uint32Array.from(address.words));
}

describe('lookup', () => {
  it('an empty table matches nothing', () => {
    const table = packRanges(flattenRanges([]));
    expect(rangeCount(table)).toBe(0);
    expect(labelSetCount(table)).toBe(0);
    expect(lookupV4(table, 0)).toBe(-1);
    expect(lookupV4(table, 0xffffffff)).toBe(-1);
    expect(lookupV6(table, new Uint32Array(4))).toBe(-1);
    expect(lookupV6(table, Uint32Array.of(-1, -1, -1, -1))).toBe(-1);
  });

  it('defect 1: the first and the last address of a range match, the neighbours do not', () => {
    const table = tableOf(['10.0.0.0/8', 0]);
    expect(labelsFor(table, '10.0.0.0')).toEqual([0]);
    expect(labelsFor(table, '10.128.0.1')).toEqual([0]);
    expect(labelsFor(table, '10.255.255.255')).toEqual([0]);
    expect(labelsFor(table, '9.255.255.255')).toBeUndefined();
    expect(labelsFor(table, '11.0.0.0')).toBeUndefined();
  });

  it('defect 1: a /32 stored as a range matches its one address', () => {
    const table = tableOf(['1.2.3.4/32', 0], ['5.6.7.8', 1]);
    expect(labelsFor(table, '1.2.3.4')).toEqual([0]);
    expect(labelsFor(table, '5.6.7.8')).toEqual([1]);
    expect(labelsFor(table, '1.2.3.3')).toBeUndefined();
    expect(labelsFor(table, '1.2.3.5')).toBeUndefined();
    expect(labelsFor(table, '5.6.7.9')).toBeUndefined();
  });

  it('defect 2: an address in 10/8 still matches when 10.1/16 exists; one in both gets both', () => {
    const table = tableOf(['10.0.0.0/8', 0], ['10.1.0.0/16', 1]);
    expect(labelsFor(table, '10.0.0.5')).toEqual([0]);
    expect(labelsFor(table, '10.1.2.3')).toEqual([0, 1]);
    expect(labelsFor(table, '10.1.0.0')).toEqual([0, 1]);
    expect(labelsFor(table, '10.1.255.255')).toEqual([0, 1]);
    expect(labelsFor(table, '10.2.0.0')).toEqual([0]);
    expect(labelsFor(table, '10.255.255.255')).toEqual([0]);
  });

  it('adjacent ranges with one label are one table entry', () => {
    const table = tableOf(['10.0.0.0/25', 2], ['10.0.0.128/25', 2], ['10.0.1.0/24', 3]);
    expect(rangeCount(table)).toBe(2);
    expect(labelsFor(table, '10.0.0.127')).toEqual([2]);
    expect(labelsFor(table, '10.0.0.128')).toEqual([2]);
    expect(labelsFor(table, '10.0.1.0')).toEqual([3]);
    expect(labelSetCount(table)).toBe(2);
  });

  it('looks up IPv6, including the first and last address and the ends of the space', () => {
    const table = tableOf(
      ['2001:db8::/32', 0],
      ['2001:db8:1::/48', 1],
      ['::/128', 2],
      ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0/124', 3],
    );
    expect(labelsFor(table, '2001:db8::')).toEqual([0]);
    expect(labelsFor(table, '2001:DB8:0000:0000:0000:0000:0000:0001')).toEqual([0]); // defect 4
    expect(labelsFor(table, '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual([0]);
    expect(labelsFor(table, '2001:db8:1::')).toEqual([0, 1]);
    expect(labelsFor(table, '2001:db8:1:ffff:ffff:ffff:ffff:ffff')).toEqual([0, 1]);
    expect(labelsFor(table, '2001:db8:2::')).toEqual([0]);
    expect(labelsFor(table, '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff')).toBeUndefined();
    expect(labelsFor(table, '2001:db9::')).toBeUndefined();
    expect(labelsFor(table, '::')).toEqual([2]);
    expect(labelsFor(table, '::1')).toBeUndefined();
    expect(labelsFor(table, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual([3]);
    expect(labelsFor(table, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffef')).toBeUndefined();
  });

  it('IPv4-mapped clients match IPv4 rules; IPv4-compatible ones do not (defect 3)', () => {
    const table = tableOf(['1.2.3.0/24', 0]);
    expect(labelsFor(table, '::ffff:1.2.3.5')).toEqual([0]);
    expect(labelsFor(table, '::ffff:102:305')).toEqual([0]);
    expect(labelsFor(table, '::1.2.3.5')).toBeUndefined();
    expect(labelsFor(table, '::102:305')).toBeUndefined();
  });

  it('IPv6 rules on the mapped block match IPv4 clients', () => {
    const table = tableOf(['::ffff:10.0.0.0/104', 0]);
    expect(labelsFor(table, '10.0.0.0')).toEqual([0]);
    expect(labelsFor(table, '10.255.255.255')).toEqual([0]);
    expect(labelsFor(table, '::ffff:10.1.2.3')).toEqual([0]);
    expect(labelsFor(table, '11.0.0.0')).toBeUndefined();
  });
});

// --- The property that matters: the table answers exactly what a brute-force scan answers ------

const V4_MAX = 0xffffffffn;
const V6_MAX = (1n << 128n) - 1n;

/** Clustered points (so ranges overlap a lot), at the ends of the spaces and across word borders. */
const v4Point = fc.oneof(
  fc.bigInt({ min: 0n, max: 24n }),
  fc.bigInt({ min: 0x0a000000n - 8n, max: 0x0a000000n + 24n }),
  fc.bigInt({ min: 0x80000000n - 12n, max: 0x80000000n + 12n }), // the sign bit of int32
  fc.bigInt({ min: V4_MAX - 24n, max: V4_MAX }),
);
const v6Point = fc.oneof(
  fc.bigInt({ min: 0n, max: 24n }),
  fc.bigInt({ min: (1n << 32n) - 12n, max: (1n << 32n) + 12n }),
  fc.bigInt({ min: (1n << 64n) - 12n, max: (1n << 64n) + 12n }),
  fc.bigInt({ min: (1n << 127n) - 12n, max: (1n << 127n) + 12n }),
  fc.bigInt({ min: V6_MAX - 24n, max: V6_MAX }),
);
const rangeArb = rangesBetween(v4Point, v6Point);
const probe = fc.oneof(
  v4Point.map((value) => ({ family: 4 as const, value })),
  v6Point.map((value) => ({ family: 6 as const, value })),
);

function bruteForce(entries: readonly LabelledRange[], family: 4 | 6, value: bigint): number[] {
  const labels = new Set<number>();
  for (const { range, label } of entries)
    if (rangeContains(range, family, value)) labels.add(label);
  return [...labels].sort((a, b) => a - b);
}

describe('properties', () => {
  it('lookup(pack(flatten(ranges))) returns exactly the labels of the ranges containing the address', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ range: rangeArb, label: fc.nat(6) }), { maxLength: 16 }),
        fc.array(probe, { minLength: 1, maxLength: 30 }),
        (entries, probes) => {
          const table = packRanges(flattenRanges(entries));
          // Probe the random addresses, and every range's bounds and their neighbours.
          const all = [...probes];
          for (const { range } of entries) {
            const max = range.family === 4 ? V4_MAX : V6_MAX;
            for (const at of [range.start - 1n, range.start, range.end, range.end + 1n]) {
              if (at >= 0n && at <= max) all.push({ family: range.family, value: at });
            }
          }
          for (const { family, value } of all) {
            const expected = bruteForce(entries, family, value);
            const index = lookupBig(table, family, value);
            if (expected.length === 0) {
              expect(index, `IPv${family} ${value}`).toBe(-1);
            } else {
              expect(index, `IPv${family} ${value}`).not.toBe(-1);
              expect(Array.from(labelsOfSet(table, index))).toEqual(expected);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rangeCount counts both families and label sets are not duplicated', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ range: rangeArb, label: fc.nat(3) }), { maxLength: 16 }),
        (entries) => {
          const flat = flattenRanges(entries);
          const table = packRanges(flat);
          expect(rangeCount(table)).toBe(flat.length);
          const keys: string[] = [];
          for (let set = 0; set < labelSetCount(table); set++)
            keys.push(labelsOfSet(table, set).join(','));
          expect(new Set(keys).size).toBe(keys.length);
          // every set is non-empty, sorted and distinct
          for (const key of keys) {
            const labels = key.split(',').map(Number);
            expect(labels.length).toBeGreaterThan(0);
            for (let k = 1; k < labels.length; k++) {
              expect(labels[k] as number).toBeGreaterThan(labels[k - 1] as number);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('labelsOfAddress', () => {
  it('finds the labels of the range holding an address, in either family, and none elsewhere', () => {
    const table = packRanges(
      flattenRanges([
        { range: parseIpRange('10.0.0.0/8')[0] as IpRange, label: 7 },
        { range: parseIpRange('2001:db8::/32')[0] as IpRange, label: 9 },
      ]),
    );
    expect([...labelsOfAddress(table, '10.1.2.3')]).toEqual([7]);
    expect([...labelsOfAddress(table, '2001:0db8:0:0::1')]).toEqual([9]);
    expect([...labelsOfAddress(table, '11.0.0.1')]).toEqual([]);
    expect([...labelsOfAddress(table, 'not an address')]).toEqual([]);
  });
});
