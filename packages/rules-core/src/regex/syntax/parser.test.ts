/**
 * The parser's contract: an AST for the dialect, a RegexSyntaxError naming the position for
 * anything else, and nothing else whatever the input (fuzzed with random bytes and with random
 * strings of regex metacharacters).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet, RuleSetError } from '../../substitution/rule-set.js';
import { Look } from './ast.js';
import { MAX_NESTING, parsePattern, RegexSyntaxError } from './parser.js';

describe('parsePattern', () => {
  it('reads the pattern as UTF-8 bytes: a quantifier applies to the last byte', () => {
    const { ast } = parsePattern('é+');
    expect(ast.type).toBe('concat');
    if (ast.type !== 'concat') return;
    const [first, second] = ast.items;
    expect(first?.type === 'bytes' && first.set.has(0xc3)).toBe(true);
    expect(
      second?.type === 'repeat' && second.body.type === 'bytes' && second.body.set.has(0xa9),
    ).toBe(true);
  });

  it('numbers capture groups in order of their "(" and skips (?:...)', () => {
    expect(parsePattern('(a)(?:b)((c)d)').groupCount).toBe(3);
  });

  it('folds ASCII case under i, in literals and classes, before negation', () => {
    const { ast } = parsePattern('[^a]', { caseInsensitive: true });
    expect(
      ast.type === 'bytes' && !ast.set.has(0x41) && !ast.set.has(0x61) && ast.set.has(0x62),
    ).toBe(true);
  });

  it('maps assertions', () => {
    expect(parsePattern('\\b').ast).toEqual({ type: 'look', look: Look.WordBoundary });
    expect(parsePattern('\\A').ast).toEqual({ type: 'look', look: Look.TextStart });
  });

  it('rejects nesting deeper than MAX_NESTING instead of exhausting the stack', () => {
    const deep = `${'('.repeat(MAX_NESTING + 1)}a${')'.repeat(MAX_NESTING + 1)}`;
    expect(() => parsePattern(deep)).toThrow(RegexSyntaxError);
    expect(() => parsePattern(`${'('.repeat(50)}a${')'.repeat(50)}`)).not.toThrow();
  });

  it('rejects automata that would be too large, naming the rule', () => {
    expect(() => compileRuleSet([{ pattern: '((a{400}){400}){400}', replacement: '' }])).toThrow(
      /rule 0 .*exceeds 250000 automaton states/,
    );
  });
});

describe('parser fuzzing', () => {
  const cleanly = (pattern: string) => {
    try {
      parsePattern(pattern);
      parsePattern(pattern, { caseInsensitive: true });
    } catch (error) {
      expect(error).toBeInstanceOf(RegexSyntaxError);
      const { position } = error as RegexSyntaxError;
      expect(position).toBeGreaterThanOrEqual(0);
      expect(position).toBeLessThanOrEqual(Buffer.byteLength(pattern));
    }
  };

  it('random bytes give an AST or a RegexSyntaxError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) =>
        cleanly(Buffer.from(bytes).toString('latin1')),
      ),
      { numRuns: 5000 },
    );
  });

  it('random metacharacter soup gives an AST or a RegexSyntaxError', () => {
    const soup = fc
      .array(fc.constantFrom(...'()[]{}|*+?.^$\\-,:=!<>#PpiaxbBdDwWsSzZAG0123456789o'.split('')), {
        maxLength: 30,
      })
      .map((cs) => cs.join(''));
    fc.assert(fc.property(soup, cleanly), { numRuns: 10000 });
  });

  it('whole rule sets compile or fail with a RuleSetError, never anything else', () => {
    const soup = fc
      .array(fc.constantFrom(...'()[]{}|*+?.^$\\ab1,9'.split('')), { maxLength: 16 })
      .map((cs) => cs.join(''));
    fc.assert(
      fc.property(soup, fc.constantFrom('', 'g', 'gi', 'x'), (pattern, flags) => {
        try {
          compileRuleSet([{ pattern, replacement: '$1', flags }]);
        } catch (error) {
          expect(error).toBeInstanceOf(RuleSetError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
