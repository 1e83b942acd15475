import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rangesBetween } from '../test-support/ip-arbitraries.js';
import { ipToBigInt, parseIp } from './address.js';
import { type FlatRange, flattenRanges, type LabelledRange } from './flatten.js';
import { type IpRange, parseIpRange } from './range.js';

const ip = (text: string) => ipToBigInt(parseIp(text));

/** Labels `text` (CIDR, start-end or address) with `label`; mapped IPv6 parts become IPv4. */
function entries(text: string, label: number): LabelledRange[] {
  return parseIpRange(text).map((range) => ({ range, label }));
}

/** A readable view of the output. */
const view = (flat: readonly FlatRange[]) =>
  flat.map((f) => ({ family: f.family, start: f.start, end: f.end, labels: [...f.labels] }));

describe('flattenRanges', () => {
  it('returns nothing for nothing', () => {
    expect(flattenRanges([])).toEqual([]);
  });

  it('keeps a single address (a /32) as a one-address range', () => {
    expect(view(flattenRanges(entries('1.2.3.4/32', 7)))).toEqual([
      { family: 4, start: ip('1.2.3.4'), end: ip('1.2.3.4'), labels: [7] },
    ]);
  });

  it('defect 2: a nested range splits its parent, and the overlap carries both labels', () => {
    const flat = flattenRanges([...entries('10.1.0.0/16', 1), ...entries('10.0.0.0/8', 0)]);
    expect(view(flat)).toEqual([
      { family: 4, start: ip('10.0.0.0'), end: ip('10.0.255.255'), labels: [0] },
      { family: 4, start: ip('10.1.0.0'), end: ip('10.1.255.255'), labels: [0, 1] },
      { family: 4, start: ip('10.2.0.0'), end: ip('10.255.255.255'), labels: [0] },
    ]);
  });

  it('partially overlapping ranges give three pieces', () => {
    const flat = flattenRanges([
      ...entries('1.0.0.10-1.0.0.20', 2),
      ...entries('1.0.0.15-1.0.0.30', 1),
    ]);
    expect(view(flat)).toEqual([
      { family: 4, start: ip('1.0.0.10'), end: ip('1.0.0.14'), labels: [2] },
      { family: 4, start: ip('1.0.0.15'), end: ip('1.0.0.20'), labels: [1, 2] },
      { family: 4, start: ip('1.0.0.21'), end: ip('1.0.0.30'), labels: [1] },
    ]);
  });

  it('merges adjacent ranges with the same labels, and only those', () => {
    const same = flattenRanges([...entries('10.0.0.128/25', 3), ...entries('10.0.0.0/25', 3)]);
    expect(view(same)).toEqual([
      { family: 4, start: ip('10.0.0.0'), end: ip('10.0.0.255'), labels: [3] },
    ]);

    const different = flattenRanges([...entries('10.0.0.0/25', 3), ...entries('10.0.0.128/25', 4)]);
    expect(different).toHaveLength(2);

    const gap = flattenRanges([
      ...entries('10.0.0.0/25', 3),
      ...entries('10.0.0.129-10.0.0.255', 3),
    ]);
    expect(gap).toHaveLength(2);
  });

  it('merges overlapping ranges with the same label into one', () => {
    const flat = flattenRanges([
      ...entries('10.0.0.0-10.0.0.200', 5),
      ...entries('10.0.0.100-10.0.0.255', 5),
      ...entries('10.0.0.50', 5),
    ]);
    expect(view(flat)).toEqual([
      { family: 4, start: ip('10.0.0.0'), end: ip('10.0.0.255'), labels: [5] },
    ]);
  });

  it('keeps families apart: IPv4 first, IPv4-compatible IPv6 is not IPv4 (defect 3)', () => {
    const flat = flattenRanges([
      ...entries('::1.2.3.0/120', 1),
      ...entries('1.2.3.0/24', 0),
      ...entries('2001:db8::/32', 2),
    ]);
    expect(view(flat)).toEqual([
      { family: 4, start: ip('1.2.3.0'), end: ip('1.2.3.255'), labels: [0] },
      { family: 6, start: 0x01020300n, end: 0x010203ffn, labels: [1] },
      {
        family: 6,
        start: ip('2001:db8::'),
        end: ip('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'),
        labels: [2],
      },
    ]);
  });

  it('handles the ends of the address spaces', () => {
    const flat = flattenRanges([
      ...entries('0.0.0.0/0', 0),
      ...entries('255.255.255.255', 1),
      ...entries('::/0', 2),
    ]);
    expect(view(flat.filter((f) => f.family === 4))).toEqual([
      { family: 4, start: 0n, end: 0xfffffffen, labels: [0, 2] },
      { family: 4, start: 0xffffffffn, end: 0xffffffffn, labels: [0, 1, 2] },
    ]);
  });

  it('gives equal label sets one shared array', () => {
    const flat = flattenRanges([
      ...entries('10.0.0.0/8', 1),
      ...entries('10.1.0.0/16', 2),
      ...entries('10.3.0.0/16', 2),
      ...entries('2001:db8::/32', 1),
    ]);
    const withOne = flat.filter((f) => f.labels.length === 1 && f.labels[0] === 1);
    expect(withOne.length).toBeGreaterThan(1);
    for (const f of withOne) expect(f.labels).toBe(withOne[0]?.labels);
  });
});

// --- Properties -------------------------------------------------------------------------------

/** A few clusters of nearby points, so random ranges overlap, nest and touch a lot. */
const v4Point = fc.oneof(
  fc.bigInt({ min: 0n, max: 40n }),
  fc.bigInt({ min: 0x0a000000n, max: 0x0a000028n }),
  fc.bigInt({ min: 0xffffffffn - 40n, max: 0xffffffffn }),
);
const v6Point = fc.oneof(
  fc.bigInt({ min: 0n, max: 40n }),
  fc.bigInt({ min: 1n << 64n, max: (1n << 64n) + 40n }),
  fc.bigInt({ min: (1n << 128n) - 41n, max: (1n << 128n) - 1n }),
);
const rangeArb = rangesBetween(v4Point, v6Point);
const labelled = fc.array(fc.record({ range: rangeArb, label: fc.nat(5) }), { maxLength: 12 });

/** Disjoint ranges by construction (to exercise the fast path), with adjacent ones now and then. */
const disjoint = fc
  .array(fc.record({ gap: fc.nat(3), size: fc.nat(5), label: fc.nat(2) }), { maxLength: 12 })
  .map((specs) => {
    let at = 0x0a000000n;
    return specs.map(({ gap, size, label }) => {
      const start = at + BigInt(gap);
      const end = start + BigInt(size);
      at = end + 1n;
      return { range: { family: 4, start, end } as IpRange, label };
    });
  });

function checkInvariants(input: readonly LabelledRange[], flat: readonly FlatRange[]): void {
  for (let i = 0; i < flat.length; i++) {
    const f = flat[i] as FlatRange;
    expect(f.start).toBeLessThanOrEqual(f.end);
    expect(f.labels.length).toBeGreaterThan(0);
    for (let k = 1; k < f.labels.length; k++) {
      expect(f.labels[k] as number).toBeGreaterThan(f.labels[k - 1] as number);
    }
    const previous = flat[i - 1];
    if (previous && previous.family === f.family) {
      expect(previous.end).toBeLessThan(f.start); // sorted and disjoint
      // merged: touching neighbours never share a label set
      if (previous.end + 1n === f.start) expect(previous.labels).not.toEqual(f.labels);
    } else if (previous) {
      expect([previous.family, f.family]).toEqual([4, 6]);
    }
  }
  // The same addresses are covered: every input bound lies in some output range, with its label.
  for (const { range, label } of input) {
    for (const at of [range.start, range.end]) {
      const hit = flat.find((f) => f.family === range.family && f.start <= at && at <= f.end);
      expect(hit?.labels).toContain(label);
    }
  }
  // ...and the output covers nothing the input did not.
  for (const f of flat) {
    for (const at of [f.start, f.end]) {
      const expected = [
        ...new Set(
          input
            .filter(
              ({ range }) => range.family === f.family && range.start <= at && at <= range.end,
            )
            .map((e) => e.label),
        ),
      ].sort((a, b) => a - b);
      expect([...f.labels]).toEqual(expected);
    }
  }
}

describe('properties', () => {
  it('output is sorted, disjoint, merged and labelled exactly by the input ranges', () => {
    fc.assert(
      fc.property(labelled, (input) => checkInvariants(input, flattenRanges(input))),
      { numRuns: 1000 },
    );
  });

  it('disjoint input (the fast path) gives the same answer as the sweep would', () => {
    fc.assert(
      fc.property(disjoint, (input) => {
        const flat = flattenRanges(input);
        checkInvariants(input, flat);
        // Adding an empty-label-free duplicate forces the sweep; the result must not change.
        const first = input[0];
        if (first) expect(view(flattenRanges([...input, first]))).toEqual(view(flat));
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on input order', () => {
    fc.assert(
      fc.property(labelled, fc.infiniteStream(fc.nat()), (input, keys) => {
        const shuffled = input
          .map((e) => ({ e, key: keys.next().value as number }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.e);
        expect(view(flattenRanges(shuffled))).toEqual(view(flattenRanges(input)));
      }),
      { numRuns: 300 },
    );
  });
});
