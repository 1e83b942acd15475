/**
 * The WebAssembly scan kernel. The substitution property and spec tests run every body through
 * it (it is the engine's only fast loop) and compare it with the general path; bodies there are
 * short, so these cover what only long ones reach: the 64 KiB window the buffer is copied into,
 * crossed by matches, partial matches and skipped stretches, in one chunk and in several.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LazyDfa } from '../../regex/lazy-dfa/lazy-dfa.js';
import { body, ruleSet } from '../../test-support/regex/arbitraries.js';
import {
  type RunResult,
  runChunks,
  substitute,
} from '../../test-support/regex/run-substitution.js';
import { compileRuleSet, MAX_CACHE_BYTES } from '../rule-set.js';
import { Substituter } from '../substituter.js';
import { ScanKernel } from './scan-kernel.js';

const WINDOW = 64 * 1024;
const unlimited = { maxBufferedBytes: Number.POSITIVE_INFINITY };
const observed = (r: RunResult) => ({
  out: r.output.toString('hex'),
  stats: r.substituter.stats,
  warnings: r.warnings,
});

/** A body of about `length` bytes: `unit` repeated, with `odd` spliced in every `every` bytes. */
function longBody(unit: string, odd: string, every: number, length: number): Buffer {
  let text = '';
  while (text.length < length)
    text += unit.repeat(Math.ceil(every / Math.max(1, unit.length))) + odd;
  return Buffer.from(text.slice(0, length), 'latin1');
}

describe('the scan kernel on bodies longer than its window', () => {
  it('settles a match that spans a window boundary, in one chunk', () => {
    const body = `a${'b'.repeat(WINDOW + 100)}c tail`;
    expect(
      substitute([{ pattern: 'ab+c', replacement: 'X', flags: 'g' }], body, 'whole', unlimited),
    ).toBe('X tail');
  });

  it('replaces dense matches across every boundary of a 200 KB chunk', () => {
    const body = 'abc-'.repeat(50_000);
    const out = substitute([{ pattern: 'ab(c)', replacement: '[$1]', flags: 'g' }], body);
    expect(out).toBe('[c]-'.repeat(50_000));
  });

  it('equals the general path for random rule sets over long bodies, whole and in large chunks', () => {
    fc.assert(
      fc.property(
        ruleSet,
        fc.string({
          unit: fc.constantFrom('a', 'b', 'c', ' ', '1', '\n'),
          minLength: 1,
          maxLength: 6,
        }),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', ' ', '1', '\n', '\x80'), maxLength: 12 }),
        fc.integer({ min: 1, max: 40_000 }),
        fc.integer({ min: WINDOW + 1, max: 3 * WINDOW }),
        // Small limits: after a match the engine rescans what it looked at beyond the match's end,
        // up to the limit, so on such repetitive bodies some generated rule sets cost length x
        // limit (the general path alike). The window with no limit at all: the test above.
        fc.constantFrom(64, 1000),
        (rules, unit, odd, every, length, maxBufferedBytes) => {
          const body = longBody(unit, odd, every, length);
          const run = (fastPaths: boolean, chunking: 'whole' | number[]) =>
            observed(runChunks(rules, body, chunking, { maxBufferedBytes, fastPaths }));
          const general = run(false, 'whole');
          expect(run(true, 'whole')).toEqual(general);
          expect(
            run(
              true,
              [WINDOW - 3, WINDOW + 5000, 2 * WINDOW + 1].filter((p) => p < length),
            ),
          ).toEqual(general);
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe('register moves in the kernel', () => {
  it('equals the general path where partial matches are reordered and fresh ones kept (general register moves)', () => {
    // Longer bodies than the substitution properties use: moves where a fresh partial match
    // survives an older one that dies ("[1, -1]") need a few live partial matches at once.
    fc.assert(
      fc.property(
        ruleSet,
        fc.array(body, { minLength: 5, maxLength: 40 }),
        fc.constantFrom(64, 8192),
        (rules, parts, maxBufferedBytes) => {
          const input = Buffer.concat(parts);
          const run = (fastPaths: boolean) =>
            observed(runChunks(rules, input, 'whole', { maxBufferedBytes, fastPaths }));
          expect(run(true)).toEqual(run(false));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('one kernel shared by streams', () => {
  it('keeps streams of one rule set apart when they take turns with long chunks', () => {
    const rules = [
      { pattern: 'ab+c', replacement: '<$&>', flags: 'g' },
      { pattern: '(\\d+)-(\\d+)', replacement: '$2-$1', flags: 'g' },
    ];
    const set = compileRuleSet(rules);
    const bodies = [
      longBody('abbbc 12-34 ', 'x', 50, 3 * WINDOW + 17),
      longBody('1-2 ab', `a${'b'.repeat(300)}`, 9_000, 2 * WINDOW + 5),
    ];
    const alone = bodies.map((body) => substitute(rules, body));
    const streams = bodies.map(() => new Substituter(set));
    const outputs: Buffer[][] = streams.map(() => []);
    const step = 100_000;
    for (let at = 0; at < Math.max(...bodies.map((b) => b.length)); at += step) {
      for (let k = 0; k < streams.length; k++) {
        const part = (bodies[k] as Buffer).subarray(at, at + step);
        if (part.length > 0) outputs[k]?.push((streams[k] as Substituter).feed(part));
      }
    }
    for (let k = 0; k < streams.length; k++) outputs[k]?.push((streams[k] as Substituter).end());
    expect(outputs.map((parts) => Buffer.concat(parts).toString('latin1'))).toEqual(alone);
  });
});

describe('output the loop writes itself', () => {
  // The loop appends the bytes before each match and its replacement to the kernel's output
  // area (256 KiB, copied out when half full): a constant, a template whose groups sit at fixed
  // offsets from the match's ends, or for a once-rule that fired the match itself; a template
  // whose groups need captures is queued for JavaScript in its place.
  const rules = [
    { pattern: 'ab', replacement: '<constant, longer than its match>', flags: 'g' },
    { pattern: 'c([0-9]+)', replacement: '[$1|$0|$7]', flags: 'g' },
    { pattern: 'd', replacement: 'ONCE' },
    { pattern: 'e', replacement: '', flags: 'g' },
    { pattern: 'f(x*)y*', replacement: '<$1>', flags: 'g' },
  ];
  const same = (body: Buffer, chunking: 'whole' | number[]) =>
    expect(observed(runChunks(rules, body, chunking, { fastPaths: true }))).toEqual(
      observed(runChunks(rules, body, chunking, { fastPaths: false })),
    );

  it('equals the general path when one chunk makes several times the output area', () => {
    const body = longBody('ab-c12-d-e-fxxy-', 'xyz', 97, 1024 * 1024);
    const out = runChunks(rules, body, 'whole', {}).output;
    expect(out.length).toBeGreaterThan(4 * 256 * 1024);
    same(body, 'whole');
    same(body, [300_000, 1, 65_535, 700_000]);
  });

  it('leaves a replacement longer than the output area to the general path, unchanged', () => {
    const long = 'L'.repeat(300 * 1024);
    const body = Buffer.from('x ab y ab z', 'latin1');
    const r = runChunks([{ pattern: 'ab', replacement: long, flags: 'g' }], body, 'whole', {});
    expect(r.output.toString('latin1')).toBe(`x ${long} y ${long} z`);
  });

  it('settles matches whose unemitted bytes start far before the window (a long partial match held)', () => {
    // "q...": a partial match of q[a-z]*! held across chunks; it fails at the digit, and the
    // matches after it start with bytes far before the window the loop was given.
    const held = `q${'a'.repeat(40_000)}1`;
    const body = Buffer.from(`${held} ab c7 ${'ab '.repeat(30_000)}`, 'latin1');
    const withHeld = [...rules, { pattern: 'q[a-z]*!', replacement: 'Q', flags: 'g' }];
    for (const chunking of ['whole', [20_000, 20_000, 5, 70_000]] as const)
      expect(
        observed(runChunks(withHeld, body, chunking, { fastPaths: true, ...unlimited })),
      ).toEqual(observed(runChunks(withHeld, body, chunking, { fastPaths: false, ...unlimited })));
  });
});

describe('ScanKernel as table space', () => {
  it('serves one DFA: a second reservation is refused', () => {
    const kernel = new ScanKernel(1, 4, 0);
    kernel.reserve(1024);
    expect(() => kernel.reserve(1024)).toThrow(/one DFA/);
  });

  it('refuses allocations beyond what was reserved, and before any reservation', () => {
    const kernel = new ScanKernel(1, 4, 0);
    expect(() => kernel.int32(1)).toThrow(/reserve/);
    kernel.reserve(0);
    const table = kernel.int32(16);
    expect(table.byteOffset % 8).toBe(0);
    expect([...table]).toEqual(new Array(16).fill(0));
    expect(() => kernel.uint8(1 << 20)).toThrow(RangeError);
  });

  it("holds a DFA's tables within the bound the DFA reserves, even with a constantly cleared cache", () => {
    const set = compileRuleSet([{ pattern: '(a|b)*c[0-9]{3}', replacement: 'X', flags: 'g' }], {
      cacheBytes: 1,
    });
    const body = 'abacab c123 '.repeat(2000);
    expect(
      substitute([{ pattern: '(a|b)*c[0-9]{3}', replacement: 'X', flags: 'g' }], body, 'whole', {
        cacheBytes: 1,
      }),
    ).toBe('abacab X '.repeat(2000));
    expect(set.dfa).toBeInstanceOf(LazyDfa);
  });

  it('rejects a DFA cache bound it could not hold, naming the option', () => {
    expect(() =>
      compileRuleSet([{ pattern: 'a', replacement: 'b' }], { cacheBytes: MAX_CACHE_BYTES + 1 }),
    ).toThrow(/cacheBytes must be an integer from 1 to/);
    expect(() => compileRuleSet([{ pattern: 'a', replacement: 'b' }], { cacheBytes: 1.5 })).toThrow(
      /cacheBytes/,
    );
  });
});
