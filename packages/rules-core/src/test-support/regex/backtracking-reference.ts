/**
 * A deliberately naive reference for tests: a backtracking matcher over the AST (Perl's
 * semantics: alternation in order, greedy/lazy by trying counts in order) and a substitution
 * loop written straight from SUBSTITUTION-SPEC points 7-11. It shares nothing with the engine
 * except the parser, is exponential on bad patterns, and must only see short inputs.
 *
 * An empty iteration of an unbounded loop (`*`, `+`, `{n,}`) past its minimum is refused, as
 * the NFA's closure refuses to revisit a state, so `(a|)*` terminates; bounded repetition allows
 * empty iterations, as Perl does (`((a)*|a){1,2}` on "a" leaves `$1` empty).
 */

import type { MatchKind } from '../../regex/lazy-dfa/lazy-dfa.js';
import { Look, type Node } from '../../regex/syntax/ast.js';
import { isWordByte } from '../../regex/syntax/byte-set.js';
import { parsePattern } from '../../regex/syntax/parser.js';

export interface ReferenceRule {
  readonly pattern: string;
  readonly replacement: string;
  readonly flags?: string;
}

type Caps = number[];
type Cont = (pos: number, caps: Caps) => boolean;

class Matcher {
  constructor(private readonly input: Uint8Array) {}

  private look(look: Look, pos: number): boolean {
    const n = this.input.length;
    const prev = pos > 0 ? (this.input[pos - 1] as number) : -1;
    const next = pos < n ? (this.input[pos] as number) : -1;
    const wordBefore = prev >= 0 && isWordByte(prev);
    const wordAfter = next >= 0 && isWordByte(next);
    switch (look) {
      case Look.LineStart:
        return pos === 0 || prev === 0x0a;
      case Look.LineEnd:
        return pos === n || next === 0x0a;
      case Look.TextStart:
        return pos === 0;
      case Look.TextEnd:
        return pos === n;
      case Look.WordBoundary:
        return wordBefore !== wordAfter;
      case Look.NotWordBoundary:
        return wordBefore === wordAfter;
    }
    return false;
  }

  /** Tries `node` at `pos`, calling `k` for each way it matches, in priority order. */
  run(node: Node, pos: number, caps: Caps, k: Cont): boolean {
    switch (node.type) {
      case 'empty':
        return k(pos, caps);
      case 'bytes':
        return pos < this.input.length && node.set.has(this.input[pos] as number)
          ? k(pos + 1, caps)
          : false;
      case 'look':
        return this.look(node.look, pos) ? k(pos, caps) : false;
      case 'group':
        return this.run(node.body, pos, caps, (end, inner) => {
          const copy = inner.slice();
          copy[2 * node.index] = pos;
          copy[2 * node.index + 1] = end;
          return k(end, copy);
        });
      case 'concat': {
        const step = (i: number, p: number, c: Caps): boolean =>
          i === node.items.length
            ? k(p, c)
            : this.run(node.items[i] as Node, p, c, (q, d) => step(i + 1, q, d));
        return step(0, pos, caps);
      }
      case 'alt':
        return node.items.some((item) => this.run(item, pos, caps, k));
      case 'repeat': {
        const { body, min, max, greedy } = node;
        const rep = (count: number, p: number, c: Caps): boolean => {
          const more = () =>
            count < max &&
            this.run(body, p, c, (q, d) =>
              q === p && count >= min && max === Infinity ? false : rep(count + 1, q, d),
            );
          const stop = () => count >= min && k(p, c);
          return greedy ? more() || stop() : stop() || more();
        };
        return rep(0, pos, caps);
      }
    }
  }
}

interface RefMatch {
  readonly rule: number;
  readonly start: number;
  readonly end: number;
  readonly caps: Caps;
}

/** The substitution of `rules` over `input` per the spec, single pass, no buffer limit. */
export function referenceSubstitute(
  rules: readonly ReferenceRule[],
  input: Uint8Array,
  matchKind: MatchKind = 'leftmost-first',
): Buffer {
  const parsed = rules.map((r) =>
    parsePattern(r.pattern, { caseInsensitive: (r.flags ?? '').includes('i') }),
  );
  const matcher = new Matcher(input);
  const fired = rules.map(() => false);
  const out: Buffer[] = [];
  const allOnce = rules.every((r) => !(r.flags ?? '').includes('g'));
  let pos = 0;
  while (pos <= input.length) {
    const m = findAt(parsed, matcher, input, pos, matchKind);
    if (m === undefined) break;
    out.push(Buffer.from(input.subarray(pos, m.start)));
    const rule = rules[m.rule] as ReferenceRule;
    const once = !(rule.flags ?? '').includes('g');
    if (once && fired[m.rule]) out.push(Buffer.from(input.subarray(m.start, m.end)));
    else {
      out.push(expand(rule.replacement, input, m));
      fired[m.rule] = true;
    }
    pos = m.end;
    if (allOnce && fired.every(Boolean)) break;
    if (m.start === m.end) {
      if (pos < input.length) out.push(Buffer.from(input.subarray(pos, pos + 1)));
      pos++;
    }
  }
  if (pos < input.length) out.push(Buffer.from(input.subarray(pos)));
  return Buffer.concat(out);
}

function findAt(
  parsed: ReadonlyArray<{ ast: Node; groupCount: number }>,
  matcher: Matcher,
  input: Uint8Array,
  from: number,
  matchKind: MatchKind,
): RefMatch | undefined {
  for (let start = from; start <= input.length; start++) {
    let best: RefMatch | undefined;
    for (let rule = 0; rule < parsed.length; rule++) {
      const { ast, groupCount } = parsed[rule] as { ast: Node; groupCount: number };
      const caps: Caps = new Array(2 * (groupCount + 1)).fill(-1);
      let found: RefMatch | undefined;
      matcher.run(ast, start, caps, (end, c) => {
        if (matchKind === 'leftmost-first') {
          found = { rule, start, end, caps: c };
          return true;
        }
        if (found === undefined || end > found.end) found = { rule, start, end, caps: c };
        return false;
      });
      if (found === undefined) continue;
      if (matchKind === 'leftmost-first') return found;
      if (best === undefined || found.end > best.end) best = found;
    }
    if (best !== undefined) return best;
  }
  return undefined;
}

function expand(template: string, input: Uint8Array, m: RefMatch): Buffer {
  const parts: Buffer[] = [];
  const re = /\$(\$|&|\{&\}|\{(\d+)\}|(\d+))|([^$]+)/g;
  for (const x of template.matchAll(re)) {
    if (x[4] !== undefined) parts.push(Buffer.from(x[4], 'utf8'));
    else if (x[1] === '$') parts.push(Buffer.from('$'));
    else {
      const n = Number(x[2] ?? x[3] ?? 0);
      const [s, e] = n === 0 ? [m.start, m.end] : [m.caps[2 * n] ?? -1, m.caps[2 * n + 1] ?? -1];
      if (s >= 0 && e >= s) parts.push(Buffer.from(input.subarray(s, e)));
    }
  }
  return Buffer.concat(parts);
}

/** Whether `node` can match the empty string (assertions count as empty). */
export function isNullable(node: Node): boolean {
  switch (node.type) {
    case 'empty':
    case 'look':
      return true;
    case 'bytes':
      return false;
    case 'group':
      return isNullable(node.body);
    case 'concat':
      return node.items.every(isNullable);
    case 'alt':
      return node.items.some(isNullable);
    case 'repeat':
      return node.min === 0 || isNullable(node.body);
  }
}

/**
 * Whether an unbounded repetition (`*`, `+`, `{n,}`) has a body that can match empty. Only
 * there do thread-list simulations (this engine, sregex, RE2) and backtrackers (Perl, the
 * reference above) disagree on priorities, e.g. `(?:.*?)*` on "ab": the simulations stop after
 * "a", Perl matches "", the reference matches "ab".
 */
export function hasNullableLoop(node: Node): boolean {
  switch (node.type) {
    case 'group':
      return hasNullableLoop(node.body);
    case 'concat':
    case 'alt':
      return node.items.some(hasNullableLoop);
    case 'repeat':
      return (node.max === Infinity && isNullable(node.body)) || hasNullableLoop(node.body);
    default:
      return false;
  }
}

/** The AST of a rule as the engine parses it. */
export function ruleAst(rule: ReferenceRule): Node {
  return parsePattern(rule.pattern, { caseInsensitive: (rule.flags ?? '').includes('i') }).ast;
}
