/**
 * Groups placed by the match's ends: which patterns qualify, where the slots land, and that
 * they agree with the Pike VM on every span it accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet } from '../../substitution/rule-set.js';
import { END_OF_INPUT } from '../nfa/look.js';
import { parsePattern } from '../syntax/parser.js';
import { FixedSpans, fixedWidth } from './fixed-spans.js';

const analyse = (p: string) => {
  const parsed = parsePattern(p, { caseInsensitive: false });
  return FixedSpans.analyse(parsed.ast, parsed.groupCount);
};
const spans = (p: string, start: number, end: number) =>
  Array.from(analyse(p)?.captures(start, end) ?? []);

describe('FixedSpans', () => {
  it('measures fixed widths in bytes: assertions are empty, alternatives must agree', () => {
    const width = (p: string) => fixedWidth(parsePattern(p, { caseInsensitive: false }).ast);
    expect(width('abc')).toBe(3);
    expect(width('\\ba.$')).toBe(2);
    expect(width('(ab|cd){3}')).toBe(6);
    expect(width('é')).toBe(2); // two UTF-8 bytes
    expect([width('a|bc'), width('a+'), width('a{1,2}'), width('a?')]).toEqual([-1, -1, -1, -1]);
  });

  it('places groups by the prefix before them and the suffix after them', () => {
    expect(spans('article-(\\d+)', 10, 20)).toEqual([10, 20, 18, 20]);
    expect(spans('src="/img/(\\d+)\\.png"', 0, 18)).toEqual([0, 18, 10, 13]);
    expect(spans('href="http://([a-z.]+)/', 5, 30)).toEqual([5, 30, 18, 29]);
    // A variable group with fixed neighbours, and groups inside groups.
    expect(spans('(a|bc)x', 0, 3)).toEqual([0, 3, 0, 2]);
    expect(spans('((a)b+)(c)', 0, 5)).toEqual([0, 5, 0, 4, 0, 1, 4, 5]);
    // Group 2 is placed (from the end), group 1 is not: variable parts on both of its sides.
    expect(analyse('x+(ab)y*(c)')).toBeUndefined();
  });

  it('refuses groups that a match may skip, repeat or leave unplaced', () => {
    for (const p of [
      'class="([a-z]+) ([a-z]+-\\d+)"', // group 1 ends where a variable part begins
      '(a)|b',
      '(a)?b',
      '(a){2}',
      '(a)*',
      'x+(a+)y+',
    ])
      expect(analyse(p), p).toBeUndefined();
    // A fixed-width group needs one fixed neighbour; with variable parts on both sides it has none.
    expect(analyse('x+(ab)y*')).toBeUndefined();
    expect(spans('x+(ab)', 0, 5)).toEqual([0, 5, 3, 5]);
    expect(spans('(ab)y*', 0, 5)).toEqual([0, 5, 0, 2]);
  });

  it('agrees with the Pike VM on every span it accepts', () => {
    // Concatenations of parts, some of them groups, with fixed and variable widths around them
    // (the general pattern generator rarely builds a pattern whose groups all qualify).
    const atom = fc.constantFrom(
      'a',
      'b',
      '[ab]',
      'c',
      '\\d',
      '\\w',
      ' ',
      '.',
      '(?:a|bc)',
      '(?:ab|c1)',
    );
    const quantifier = fc.constantFrom('', '', '', '+', '*', '?', '{2}', '{1,2}', '+?');
    const look = fc.constantFrom('', '', '', '\\b', '^', '$');
    const part = fc
      .tuple(look, atom, quantifier, fc.constantFrom('', '', '(', '(?:', 'nested'))
      .map(([l, a, q, open]) =>
        open === ''
          ? `${l}${a}${q}`
          : open === 'nested'
            ? `(${l}(${a})${q})`
            : `${open}${l}${a}${q})`,
      );
    const fixedPattern = fc.array(part, { minLength: 1, maxLength: 5 }).map((p) => p.join(''));
    // Bodies over the atoms' own bytes, so that most patterns match somewhere.
    const text = fc
      .array(fc.constantFrom(...'aabbc1 '), { maxLength: 12 })
      .map((chars) => Buffer.from(chars.join(''), 'latin1'));
    let compared = 0;
    fc.assert(
      fc.property(fixedPattern, text, (p, input) => {
        const parsed = parsePattern(p, { caseInsensitive: false });
        const fixed = FixedSpans.analyse(parsed.ast, parsed.groupCount);
        fc.pre(fixed !== undefined && parsed.groupCount > 0);
        const set = compileRuleSet([{ pattern: p, replacement: '$1', flags: 'g' }]);
        for (let start = 0; start <= input.length; start++) {
          for (let end = start; end <= input.length; end++) {
            const prev = start > 0 ? (input[start - 1] as number) : -1;
            const next = end < input.length ? (input[end] as number) : END_OF_INPUT;
            const vm = set.pikeVm(0).captures(input, start, end, prev, next);
            if (vm === undefined) continue; // not a match: FixedSpans is never asked then
            compared++;
            expect(Array.from(fixed.captures(start, end)), `${p} [${start}, ${end})`).toEqual(
              Array.from(vm),
            );
          }
        }
      }),
      { numRuns: 1000 },
    );
    // fast-check draws until 1000 patterns qualify; most bodies hold no match of the pattern,
    // so check that enough spans were compared (680-800 in six runs) for this to mean something.
    expect(compared).toBeGreaterThan(300);
  });
});
