/**
 * Property tests: for random rule sets of the supported syntax and random bodies,
 * 1. the output does not depend on the chunking (any cut points, and 1-byte chunks);
 * 2. the single-chunk output equals the independent backtracking reference (both match kinds),
 *    for patterns without nullable unbounded loops (see `hasNullableLoop`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BODY_BYTES, body, cuts, ruleSet } from '../regex/testing/arbitraries.js';
import {
  hasNullableLoop,
  referenceSubstitute,
  ruleAst,
} from '../regex/testing/backtracking-reference.js';
import { runChunks, split } from '../regex/testing/run-substitution.js';
import { compileRuleSet } from './rule-set.js';
import { Substituter } from './substituter.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unlimited = { maxBufferedBytes: Number.POSITIVE_INFINITY };

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

  it('the idle-state prefilter changes nothing (longer bodies, random chunking)', () => {
    const longBody = fc
      .array(fc.constantFrom(...BODY_BYTES), { minLength: 20, maxLength: 300 })
      .map((bytes) => Buffer.from(bytes));
    fc.assert(
      fc.property(
        ruleSet,
        longBody.chain((b) => fc.tuple(fc.constant(b), cuts(b.length))),
        (rules, [input, points]) => {
          const plain = runChunks(rules, input, points, { ...unlimited, prefilter: false }).output;
          expect(hex(runChunks(rules, input, points, unlimited).output)).toBe(hex(plain));
        },
      ),
      { numRuns: 300 },
    );
  });
});
