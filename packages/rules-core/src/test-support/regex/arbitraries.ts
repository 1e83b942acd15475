// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${1}" is replacement-template syntax here, not JS
/**
 * fast-check arbitraries for the substitution property tests: patterns drawn from the
 * supported dialect over a tiny alphabet (so that matches, overlaps and near-misses are common),
 * rule sets, templates and bodies.
 */
import fc from 'fast-check';
import type { SubstitutionRule } from '../../substitution/rule-set.js';

/** Body bytes: letters, a digit, space, newline and one non-ASCII byte without a case. */
export const BODY_BYTES = [0x61, 0x62, 0x63, 0x20, 0x0a, 0x31, 0x80] as const;

const literal = fc.constantFrom('a', 'b', 'c', ' ', '1', '\\n', 'A', '\\x80');
const klass = fc.constantFrom('.', '[ab]', '[^a]', '[a-c]', '\\w', '\\W', '\\s', '\\S', '\\d');
const look = fc.constantFrom('^', '$', '\\b', '\\B', '\\A', '\\z');
const quantifier = fc.constantFrom(
  ...['', '', '', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,2}', '{0,2}?', '{2,}'],
);

/** A pattern of the supported syntax, nested at most `depth` groups deep. */
export function pattern(depth = 2): fc.Arbitrary<string> {
  const { node } = fc.letrec<{ node: string; atom: string; seq: string }>((tie) => ({
    atom: fc.oneof(
      { maxDepth: depth, depthIdentifier: 'pattern' },
      { weight: 5, arbitrary: literal },
      { weight: 2, arbitrary: klass },
      { weight: 1, arbitrary: look },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom('(', '(?:'), tie('node'))
          .map(([open, inner]) => `${open}${inner})`),
      },
    ),
    seq: fc
      .array(
        fc.tuple(tie('atom'), quantifier).map(([a, q]) => a + q),
        { minLength: 1, maxLength: 4 },
      )
      .map((parts) => parts.join('')),
    node: fc.array(tie('seq'), { minLength: 1, maxLength: 3 }).map((alts) => alts.join('|')),
  }));
  return node as fc.Arbitrary<string>;
}

const template = fc.constantFrom('X', '<$&>', '[$1]', '', '$2$1', '${1}-', '$$');

export const rule: fc.Arbitrary<SubstitutionRule> = fc.record({
  pattern: pattern(),
  replacement: template,
  flags: fc.constantFrom('g', 'g', 'g', '', 'gi', 'i'),
});

export const ruleSet = fc.array(rule, { minLength: 1, maxLength: 3 });

export const body = fc
  .array(fc.constantFrom(...BODY_BYTES), { maxLength: 14 })
  .map((bytes) => Buffer.from(bytes));

/** Cut points for a body of `length` bytes (sorted, distinct, inside the body). */
export function cuts(length: number): fc.Arbitrary<number[]> {
  if (length < 2) return fc.constant([]);
  return fc
    .uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: length - 1 })
    .map((xs) => xs.sort((a, b) => a - b));
}
