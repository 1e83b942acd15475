/**
 * Property tests: for random rule sets of the supported syntax and random bodies,
 * 1. the output does not depend on the chunking (any cut points, and 1-byte chunks);
 * 2. the single-chunk output equals the independent backtracking reference (both match kinds),
 *    for patterns without nullable unbounded loops (see `hasNullableLoop`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BODY_BYTES, body, cuts, ruleSet } from '../test-support/regex/arbitraries.js';
import {
  hasNullableLoop,
  referenceSubstitute,
  ruleAst,
} from '../test-support/regex/backtracking-reference.js';
import {
  type Chunking,
  type RunResult,
  runChunks,
  split,
} from '../test-support/regex/run-substitution.js';
import { compileRuleSet, type MatchKind, type SubstitutionRule } from './rule-set.js';
import { Substituter } from './substituter.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const g = (pattern: string, replacement: string) => ({ pattern, replacement, flags: 'g' });
const unlimited = { maxBufferedBytes: Number.POSITIVE_INFINITY };

/** What a run shows to a user: its output, statistics and warnings. */
const observed = (r: RunResult) => ({
  out: hex(r.output),
  stats: r.substituter.stats,
  warnings: r.warnings,
});

/** Bodies of 20-300 bytes with a random chunking, for the prefilter's longer idle stretches. */
const longChunkedBody = fc
  .array(fc.constantFrom(...BODY_BYTES), { minLength: 20, maxLength: 300 })
  .map((bytes) => Buffer.from(bytes))
  .chain((b) => fc.tuple(fc.constant(b), cuts(b.length)));

/** The fast loop, whole and cut at `points`, observed exactly as the general path. */
function expectFastLikeGeneral(
  rules: readonly SubstitutionRule[],
  input: Uint8Array,
  points: readonly number[],
  maxBufferedBytes: number,
): void {
  const run = (fastPaths: boolean, chunking: Chunking) =>
    observed(runChunks(rules, input, chunking, { maxBufferedBytes, fastPaths }));
  const general = run(false, 'whole');
  expect(run(true, 'whole')).toEqual(general);
  expect(run(true, points)).toEqual(general);
}

describe('substitution properties', () => {
  it('streamed output equals single-chunk output for every chunking', () => {
    fc.assert(
      fc.property(
        ruleSet,
        body.chain((b) => fc.tuple(fc.constant(b), cuts(b.length))),
        (rules, [input, points]) => {
          const whole = hex(runChunks(rules, input, 'whole', unlimited).output);
          expect(hex(runChunks(rules, input, points, unlimited).output)).toBe(whole);
          expect(hex(runChunks(rules, input, 'bytes', unlimited).output)).toBe(whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  it.each(['leftmost-first', 'leftmost-longest'] as const)(
    'single-chunk output equals the backtracking reference (%s)',
    (matchKind) => {
      fc.assert(
        fc.property(ruleSet, body, (rules, input) => {
          // Nullable loops are where simulations and backtrackers legitimately disagree.
          fc.pre(!rules.some((r) => hasNullableLoop(ruleAst(r))));
          const out = runChunks(rules, input, 'whole', { ...unlimited, matchKind }).output;
          expect(hex(out)).toBe(hex(referenceSubstitute(rules, input, matchKind)));
        }),
        { numRuns: 400 },
      );
    },
  );

  it('a small DFA cache (cleared constantly) changes nothing', () => {
    fc.assert(
      fc.property(ruleSet, body, (rules, input) => {
        const small = runChunks(rules, input, 'bytes', { ...unlimited, cacheBytes: 1 }).output;
        expect(hex(small)).toBe(hex(runChunks(rules, input, 'whole', unlimited).output));
      }),
      { numRuns: 200 },
    );
  });

  it('streams sharing one rule set (and one tiny, constantly cleared cache) do not disturb each other', () => {
    fc.assert(
      fc.property(ruleSet, body, body, (rules, a, b) => {
        const set = compileRuleSet(rules, { cacheBytes: 1 });
        const streams = [a, b].map((input) => ({
          input,
          chunks: split(input, 'bytes'),
          s: new Substituter(set, unlimited),
          out: [] as Buffer[],
        }));
        const longest = Math.max(a.length, b.length);
        for (let i = 0; i < longest; i++) {
          for (const st of streams) {
            const chunk = st.chunks[i];
            if (chunk !== undefined) st.out.push(st.s.feed(chunk));
          }
        }
        for (const st of streams) {
          st.out.push(st.s.end());
          const alone = runChunks(rules, st.input, 'whole', unlimited).output;
          expect(hex(Buffer.concat(st.out))).toBe(hex(alone));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('the fast loop equals the general path: output, statistics, warnings (buffer limits too)', () => {
    const longBody = fc
      .array(fc.constantFrom(...BODY_BYTES), { minLength: 0, maxLength: 120 })
      .map((bytes) => Buffer.from(bytes));
    // Small limits too, so that the buffer limit and the loop's deadlines meet restarts.
    const limit = fc.constantFrom(Number.POSITIVE_INFINITY, 0, 1, 2, 3, 5, 8, 13, 21, 40);
    fc.assert(
      fc.property(
        ruleSet,
        longBody.chain((b) => fc.tuple(fc.constant(b), cuts(b.length))),
        limit,
        fc.constantFrom('leftmost-first', 'leftmost-longest') as fc.Arbitrary<MatchKind>,
        fc.boolean(),
        (rules, [input, points], maxBufferedBytes, matchKind, prefilter) => {
          const run = (fastPaths: boolean) =>
            observed(
              runChunks(rules, input, points, {
                maxBufferedBytes,
                matchKind,
                prefilter,
                fastPaths,
              }),
            );
          expect(run(true)).toEqual(run(false));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('settling in the loop a match reported before its final byte changes nothing', () => {
    // A match, then threads that live on and die without matching (`a(?:bc)?` on "abx"): the
    // loop settles the match it remembered, restarts at its end and must forget it.
    const tailRule = fc.record({
      pattern: fc
        .tuple(
          fc.constantFrom('a', 'b', 'ab', '[ab]', '(a)'),
          fc.constantFrom('(?:bc)?', '(?:bc)*', '(c|bc)?', '(?:b+c)?', 'b?c?', '(?:cab)?'),
          fc.constantFrom('', 'a', '\\b', '$'),
        )
        .map((parts) => parts.join('')),
      replacement: fc.constantFrom('X', '<$&>', '[$1]', ''),
      flags: fc.constantFrom('g', 'g', '', 'gi'),
    });
    const abcBody = fc
      .array(fc.constantFrom(0x61, 0x62, 0x63, 0x20, 0x78), { maxLength: 40 })
      .map((bytes) => Buffer.from(bytes));
    fc.assert(
      fc.property(
        fc.array(tailRule, { minLength: 1, maxLength: 3 }),
        abcBody.chain((b) => fc.tuple(fc.constant(b), cuts(b.length))),
        fc.constantFrom(Number.POSITIVE_INFINITY, 2, 4),
        (rules, [input, points], maxBufferedBytes) =>
          expectFastLikeGeneral(rules, input, points, maxBufferedBytes),
      ),
      { numRuns: 400 },
    );
  });

  it('the fast loop hits the buffer limit where the general path does, after matches too', () => {
    // Short matches settled in the loop, then a partial match that outgrows the limit.
    const rules = fc.constantFrom(
      [g('x', 'X'), g('y[^z]*z', 'Y')],
      [g('y[^z]*z', 'Y'), g('x+', '<$&>')],
      [g('x', ''), g('(y)[xy ]*z', '$1')],
      [g('\\bx\\b', 'X'), g('y.*z', 'Y')],
    );
    const input = fc
      .array(fc.constantFrom(0x78, 0x78, 0x79, 0x7a, 0x20), { maxLength: 80 })
      .map((bytes) => Buffer.from(bytes));
    fc.assert(
      fc.property(
        rules,
        input.chain((b) => fc.tuple(fc.constant(b), cuts(b.length))),
        fc.integer({ min: 0, max: 24 }),
        (set, [body, points], maxBufferedBytes) =>
          expectFastLikeGeneral(set, body, points, maxBufferedBytes),
      ),
      { numRuns: 500 },
    );
  });

  it('the prefilter changes nothing when where a match may start depends on the byte before', () => {
    // Rules starting with an assertion make the skip tables depend on the facts (`\b`, `^`).
    const rule = fc.record({
      pattern: fc
        .tuple(
          fc.constantFrom('\\b', '\\B', '^', '\\A', ''),
          fc.constantFrom('a', 'b', 'ab', 'c1', ' a', '\\n', '[ab]c'),
          fc.constantFrom('', '\\b', '$', 'b*'),
        )
        .map((parts) => parts.join('')),
      replacement: fc.constantFrom('X', '<$&>'),
      flags: fc.constantFrom('g', 'gi'),
    });
    fc.assert(
      fc.property(
        fc.array(rule, { minLength: 1, maxLength: 3 }),
        longChunkedBody,
        (rules, [input, points]) => {
          const general = runChunks(rules, input, 'whole', { fastPaths: false }).output;
          expect(hex(runChunks(rules, input, points).output)).toBe(hex(general));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the idle-state prefilter changes nothing (longer bodies, random chunking)', () => {
    fc.assert(
      fc.property(ruleSet, longChunkedBody, (rules, [input, points]) => {
        const plain = runChunks(rules, input, points, { ...unlimited, prefilter: false }).output;
        expect(hex(runChunks(rules, input, points, unlimited).output)).toBe(hex(plain));
      }),
      { numRuns: 300 },
    );
  });
});
