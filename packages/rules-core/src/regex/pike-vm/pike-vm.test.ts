/**
 * The capture extractors agree: the Pike VM, the bounded backtracker and (for one-pass rules)
 * the one-pass tables return the same slots for random patterns and spans.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet } from '../../substitution/rule-set.js';
import { Substituter } from '../../substitution/substituter.js';
import { body, pattern } from '../../test-support/regex/arbitraries.js';
import { END_OF_INPUT } from '../nfa/look.js';
import { BoundedBacktracker } from './bounded-backtracker.js';
import { OnePass } from './one-pass.js';

describe('PikeVm and BoundedBacktracker', () => {
  it('return the same captures for every match the engine finds', () => {
    fc.assert(
      fc.property(pattern(), body, (p, input) => {
        const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
        const range = set.nfa.ruleRanges[0] as { first: number; last: number };
        const bt = new BoundedBacktracker(set.nfa, 0, range);
        const onePass = OnePass.build(set.nfa, 0);
        // Every (start, end) the reference stream replaced is a confirmed span; try all spans
        // that the Pike VM accepts instead: both must agree on acceptance and slots.
        for (let start = 0; start <= input.length; start++) {
          for (let end = start; end <= input.length; end++) {
            const prev = start > 0 ? (input[start - 1] as number) : -1;
            const next = end < input.length ? (input[end] as number) : END_OF_INPUT;
            const a = set.pikeVm(0).captures(input, start, end, prev, next);
            const b = bt.captures(input, start, end, prev, next);
            expect(b && Array.from(b)).toEqual(a && Array.from(a));
            if (onePass !== undefined) {
              const c = onePass.captures(input, start, end, prev, next);
              expect(c && Array.from(c)).toEqual(a && Array.from(a));
            }
          }
        }
        new Substituter(set).end();
      }),
      { numRuns: 300 },
    );
  });

  it('one-pass tables agree with the Pike VM on one-pass rules with groups and assertions', () => {
    // Random patterns are rarely one-pass; these are built to be, most of the time.
    const atom = fc.constantFrom('a', 'b', '[ab]', 'c', '1', '\\d', '\\w', '\\s', ' ', '[^a]', '.');
    const look = fc.constantFrom('', '', '', '^', '$', '\\b', '\\B', '\\A', '\\z');
    const quantifier = fc.constantFrom('', '', '+', '*', '?', '{2}', '{1,2}', '+?', '??');
    const part = fc
      .tuple(
        look,
        atom,
        quantifier,
        fc.constantFrom('', '(', '(?:'),
        fc.constantFrom('', '|c', '|1b'),
      )
      .map(([l, a, q, open, alt]) => (open === '' ? `${l}${a}${q}` : `${open}${l}${a}${q}${alt})`));
    const onePassPattern = fc.array(part, { minLength: 1, maxLength: 4 }).map((p) => p.join(''));
    let built = 0;
    fc.assert(
      fc.property(onePassPattern, body, (p, input) => {
        const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
        const onePass = OnePass.build(set.nfa, 0);
        fc.pre(onePass !== undefined);
        built++;
        for (let start = 0; start <= input.length; start++) {
          for (let end = start; end <= input.length; end++) {
            const prev = start > 0 ? (input[start - 1] as number) : -1;
            const next = end < input.length ? (input[end] as number) : END_OF_INPUT;
            const a = set.pikeVm(0).captures(input, start, end, prev, next);
            const c = onePass?.captures(input, start, end, prev, next);
            expect(c && Array.from(c)).toEqual(a && Array.from(a));
          }
        }
      }),
      { numRuns: 400 },
    );
    expect(built).toBeGreaterThan(100);
  });

  it('one-pass tables refuse rules where the path is not forced', () => {
    for (const p of ['(a|ab)c', '(a*)a', 'a*a', '(\\ba|a)b', '(?:a|\\w)x']) {
      const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
      expect(OnePass.build(set.nfa, 0), p).toBeUndefined();
    }
    for (const p of [
      'href="([^"]*)"',
      'article-(\\d+)',
      '(shop|blog)\\.x',
      '\\b(\\w+) (\\d+)\\b',
    ]) {
      const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
      expect(OnePass.build(set.nfa, 0), p).toBeDefined();
    }
  });
});
