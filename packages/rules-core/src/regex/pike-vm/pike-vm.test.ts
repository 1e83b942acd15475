/**
 * The two capture extractors agree: the Pike VM and the bounded backtracker return the same
 * slots for random patterns and spans the DFA confirmed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet } from '../../substitution/rule-set.js';
import { Substituter } from '../../substitution/substituter.js';
import { END_OF_INPUT } from '../nfa/look.js';
import { body, pattern } from '../testing/arbitraries.js';
import { BoundedBacktracker } from './bounded-backtracker.js';

describe('PikeVm and BoundedBacktracker', () => {
  it('return the same captures for every match the engine finds', () => {
    fc.assert(
      fc.property(pattern(), body, (p, input) => {
        const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
        const range = set.nfa.ruleRanges[0] as { first: number; last: number };
        const bt = new BoundedBacktracker(set.nfa, 0, range);
        // Every (start, end) the reference stream replaced is a confirmed span; try all spans
        // that the Pike VM accepts instead: both must agree on acceptance and slots.
        for (let start = 0; start <= input.length; start++) {
          for (let end = start; end <= input.length; end++) {
            const prev = start > 0 ? (input[start - 1] as number) : -1;
            const next = end < input.length ? (input[end] as number) : END_OF_INPUT;
            const a = set.pikeVm(0).captures(input, start, end, prev, next);
            const b = bt.captures(input, start, end, prev, next);
            expect(b && Array.from(b)).toEqual(a && Array.from(a));
          }
        }
        new Substituter(set).end();
      }),
      { numRuns: 300 },
    );
  });
});
