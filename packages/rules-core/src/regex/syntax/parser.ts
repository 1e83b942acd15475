/**
 * Parser for the sregex dialect (SUBSTITUTION-SPEC points 3-6), producing an {@link Node} AST.
 *
 * Contract:
 * - The pattern is read as UTF-8 bytes, like sregex reads nginx's configuration: `é` is two
 *   literal bytes, and `é+` repeats the second one. Error positions are 0-based byte offsets
 *   (equal to character offsets for ASCII patterns).
 * - Every accepted construct matches bytes: `.` is any byte, `\w \d \s \b` are ASCII, `\s` is
 *   `[ \f\n\r\t]`, `i` folds ASCII letters only.
 * - Everything else is rejected with a {@link RegexSyntaxError} naming the position and the
 *   construct: backreferences, lookaround, inline flags, named groups, POSIX classes, Unicode
 *   properties, `\Z`, `\G`, possessive and nested quantifiers, counts of 500 or more.
 * - The parser never throws anything but `RegexSyntaxError` and runs in time linear in the pattern
 *   length; nesting deeper than {@link MAX_NESTING} is rejected so that recursion stays bounded.
 *
 * Octal escapes follow Perl where it is unambiguous: `\0`, `\0NN`, `\NNN` (three octal digits)
 * and `\o{...}` are octal; `\1`..`\9` with fewer than three digits are backreferences, rejected.
 * Escaped punctuation is always a literal (a superset of sregex, which rejects a few).
 */
import type { Node, ParsedPattern } from './ast.js';
import { Look } from './ast.js';
import { ByteSet } from './byte-set.js';

/** sregex rejects repetition counts of 500 and more. */
export const MAX_REPEAT = 499;
/** Deepest group nesting accepted (keeps the recursive descent off the JS stack limit). */
export const MAX_NESTING = 200;

export class RegexSyntaxError extends Error {
  constructor(
    /** 0-based byte offset in the pattern of the construct at fault. */
    readonly position: number,
    /** What is wrong, e.g. "lookahead is not supported". */
    readonly reason: string,
  ) {
    super(`position ${position}: ${reason}`);
    this.name = 'RegexSyntaxError';
  }
}

export interface ParseOptions {
  /** The rule's `i` flag: ASCII case folding. */
  readonly caseInsensitive?: boolean;
}

/** Parses `pattern`; throws {@link RegexSyntaxError} for anything outside the dialect. */
export function parsePattern(pattern: string, options: ParseOptions = {}): ParsedPattern {
  const parser = new Parser(Buffer.from(pattern, 'utf8'), options.caseInsensitive === true);
  return parser.parse();
}

const CH = {
  tab: 0x09,
  lf: 0x0a,
  ff: 0x0c,
  cr: 0x0d,
  esc: 0x1b,
  bel: 0x07,
  bs: 0x08,
  space: 0x20,
  dollar: 0x24,
  lparen: 0x28,
  rparen: 0x29,
  star: 0x2a,
  plus: 0x2b,
  comma: 0x2c,
  dash: 0x2d,
  dot: 0x2e,
  zero: 0x30,
  seven: 0x37,
  nine: 0x39,
  colon: 0x3a,
  question: 0x3f,
  lbracket: 0x5b,
  backslash: 0x5c,
  rbracket: 0x5d,
  caret: 0x5e,
  lbrace: 0x7b,
  pipe: 0x7c,
  rbrace: 0x7d,
} as const;

const DIGITS = ByteSet.range(0x30, 0x39);
const WORD = ByteSet.ranges([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]);
const SPACE = ByteSet.of(0x20, 0x0c, 0x0a, 0x0d, 0x09);
const HSPACE = ByteSet.of(0x09, 0x20, 0xa0);
const VSPACE = ByteSet.of(0x0a, 0x0b, 0x0c, 0x0d, 0x85);
const ANY = ByteSet.range(0, 255);
const NOT_NEWLINE = ByteSet.of(0x0a).negated();

/** Named byte sets of the escapes `\d \D \w \W \s \S \h \H \v \V`. */
const CLASS_ESCAPES: Record<string, ByteSet> = {
  d: DIGITS,
  D: DIGITS.negated(),
  w: WORD,
  W: WORD.negated(),
  s: SPACE,
  S: SPACE.negated(),
  h: HSPACE,
  H: HSPACE.negated(),
  v: VSPACE,
  V: VSPACE.negated(),
};

const CONTROL_ESCAPES: Record<string, number> = {
  t: CH.tab,
  n: CH.lf,
  r: CH.cr,
  f: CH.ff,
  e: CH.esc,
  a: CH.bel,
};

/** Escapes of other regex dialects that sregex does not have, with the reason to give. */
const REJECTED_ESCAPES: Record<string, string> = {
  Z: '\\Z is not supported (use \\z or $)',
  G: '\\G is not supported',
  p: 'Unicode properties (\\p) are not supported',
  P: 'Unicode properties (\\P) are not supported',
  X: 'Unicode extended grapheme clusters (\\X) are not supported',
  g: 'backreferences (\\g) are not supported',
  k: 'named backreferences (\\k) are not supported',
  K: '\\K is not supported',
  Q: 'quoting (\\Q...\\E) is not supported',
  E: 'quoting (\\Q...\\E) is not supported',
  u: 'case modification (\\u) is not supported',
  U: 'case modification (\\U) is not supported',
  l: 'case modification (\\l) is not supported',
  L: 'case modification (\\L) is not supported',
  R: '\\R is not supported',
};

const isOctal = (c: number | undefined) => c !== undefined && c >= CH.zero && c <= CH.seven;
const isDigit = (c: number | undefined) => c !== undefined && c >= CH.zero && c <= CH.nine;
const isAlnum = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const hexValue = (c: number | undefined): number => {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
};

interface Quantifier {
  readonly min: number;
  readonly max: number;
  /** Bytes the quantifier occupies in the pattern. */
  readonly length: number;
}

/** One class member: a single byte (which can start a range) or a whole set such as `\d`. */
type ClassItem = { readonly byte: number } | { readonly set: ByteSet };

class Parser {
  private pos = 0;
  private groups = 0;
  private depth = 0;

  constructor(
    private readonly src: Uint8Array,
    private readonly fold: boolean,
  ) {}

  parse(): ParsedPattern {
    const ast = this.parseAlternation();
    if (this.pos < this.src.length) {
      // parseAlternation only stops early at a ')' it did not open.
      throw this.error(this.pos, 'unmatched ")"');
    }
    return { ast, groupCount: this.groups };
  }

  private peek(offset = 0): number | undefined {
    return this.src[this.pos + offset];
  }

  private error(position: number, reason: string): RegexSyntaxError {
    return new RegexSyntaxError(position, reason);
  }

  private parseAlternation(): Node {
    const items = [this.parseConcat()];
    while (this.peek() === CH.pipe) {
      this.pos++;
      items.push(this.parseConcat());
    }
    return items.length === 1 ? (items[0] as Node) : { type: 'alt', items };
  }

  private parseConcat(): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === CH.pipe || c === CH.rparen) break;
      const start = this.pos;
      if (this.quantifierAt(this.pos) !== undefined) {
        throw this.error(start, `quantifier "${String.fromCharCode(c)}" has nothing to repeat`);
      }
      items.push(this.parseQuantified(this.parseAtom()));
    }
    if (items.length === 0) return { type: 'empty' };
    return items.length === 1 ? (items[0] as Node) : { type: 'concat', items };
  }

  /** Applies the quantifiers following an atom: one, optionally lazy; never two. */
  private parseQuantified(atom: Node): Node {
    const at = this.pos;
    const q = this.quantifierAt(at);
    if (q === undefined) return atom;
    this.pos += q.length;
    let greedy = true;
    if (this.peek() === CH.question) {
      greedy = false;
      this.pos++;
    } else if (this.peek() === CH.plus) {
      throw this.error(this.pos, 'possessive quantifiers are not supported');
    }
    if (this.quantifierAt(this.pos) !== undefined) {
      throw this.error(this.pos, 'nested quantifiers are not supported');
    }
    return { type: 'repeat', body: atom, min: q.min, max: q.max, greedy };
  }

  /** The quantifier starting at `at`, if any. A `{` that is not a valid count is a literal. */
  private quantifierAt(at: number): Quantifier | undefined {
    const c = this.src[at];
    if (c === CH.star) return { min: 0, max: Infinity, length: 1 };
    if (c === CH.plus) return { min: 1, max: Infinity, length: 1 };
    if (c === CH.question) return { min: 0, max: 1, length: 1 };
    if (c !== CH.lbrace) return undefined;
    let i = at + 1;
    const readNumber = (): number => {
      let n = 0;
      const from = i;
      while (isDigit(this.src[i])) {
        n = Math.min(n * 10 + ((this.src[i] as number) - CH.zero), 1e9);
        i++;
      }
      return i === from ? -1 : n;
    };
    const min = readNumber();
    if (min < 0) return undefined;
    let max = min;
    if (this.src[i] === CH.comma) {
      i++;
      if (this.src[i] === CH.rbrace) max = Infinity;
      else {
        max = readNumber();
        if (max < 0) return undefined;
      }
    }
    if (this.src[i] !== CH.rbrace) return undefined;
    const length = i + 1 - at;
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) {
      throw this.error(at, `repetition count above the sregex limit of ${MAX_REPEAT}`);
    }
    if (min > max) throw this.error(at, `repetition {${min},${max}} has min > max`);
    return { min, max, length };
  }

  private parseAtom(): Node {
    const start = this.pos;
    const c = this.src[this.pos++] as number;
    switch (c) {
      case CH.lparen:
        return this.parseGroup(start);
      case CH.lbracket:
        return this.parseClass(start);
      case CH.backslash:
        return this.parseEscape(start);
      case CH.dot:
        return { type: 'bytes', set: ANY };
      case CH.caret:
        return { type: 'look', look: Look.LineStart };
      case CH.dollar:
        return { type: 'look', look: Look.LineEnd };
      default:
        return this.literal(c);
    }
  }

  private literal(byte: number): Node {
    const set = ByteSet.of(byte);
    return { type: 'bytes', set: this.fold ? set.caseFolded() : set };
  }

  private parseGroup(start: number): Node {
    if (++this.depth > MAX_NESTING) {
      throw this.error(start, `groups nested deeper than ${MAX_NESTING} levels`);
    }
    let index = 0;
    if (this.peek() === CH.question) {
      this.rejectGroupSyntax(start);
      this.pos += 2; // "?:"
    } else {
      index = ++this.groups;
    }
    const body = this.parseAlternation();
    if (this.peek() !== CH.rparen) throw this.error(start, 'missing ")" for this "("');
    this.pos++;
    this.depth--;
    return index === 0 ? body : { type: 'group', index, body };
  }

  /** At `(?`: accepts only `(?:`, naming any other extension in the error. */
  private rejectGroupSyntax(start: number): void {
    const next = this.peek(1);
    const after = this.peek(2);
    if (next === CH.colon) return;
    const ch = next === undefined ? '' : String.fromCharCode(next);
    const reason = (() => {
      if (ch === '=' || ch === '!') return 'lookahead is not supported';
      if (ch === '<' && (after === 0x3d || after === 0x21)) return 'lookbehind is not supported';
      if (ch === '<' || ch === "'" || ch === 'P') return 'named groups are not supported';
      if (ch === '#') return 'comments (?#...) are not supported';
      if (ch === '>') return 'atomic groups are not supported';
      if (ch === '|') return 'branch reset groups are not supported';
      if (ch === '(') return 'conditionals are not supported';
      if (ch === 'R' || ch === '&' || ch === '+' || isDigit(next)) {
        return 'recursion is not supported';
      }
      if (/^[a-zA-Z^-]$/.test(ch)) return 'inline flags like (?i) are not supported';
      return `unsupported group syntax "(?${ch}"`;
    })();
    throw this.error(start, reason);
  }

  private parseEscape(start: number): Node {
    const c = this.src[this.pos++];
    if (c === undefined) throw this.error(start, 'trailing backslash');
    const ch = String.fromCharCode(c);
    if (ch === 'b') return { type: 'look', look: Look.WordBoundary };
    if (ch === 'B') return { type: 'look', look: Look.NotWordBoundary };
    if (ch === 'A') return { type: 'look', look: Look.TextStart };
    if (ch === 'z') return { type: 'look', look: Look.TextEnd };
    if (ch === 'N') return { type: 'bytes', set: NOT_NEWLINE };
    if (ch === 'C') return { type: 'bytes', set: ANY };
    const named = CLASS_ESCAPES[ch];
    if (named !== undefined) return { type: 'bytes', set: this.fold ? named.caseFolded() : named };
    if (isDigit(c) && c !== CH.zero) {
      if (isOctal(c) && isOctal(this.peek()) && isOctal(this.peek(1))) {
        return this.literal(this.octalDigits(start, 3, c));
      }
      throw this.error(start, `backreferences (\\${ch}) are not supported`);
    }
    return this.literal(this.escapedByte(start, c, false));
  }

  /**
   * The byte of a single-byte escape whose first character `c` has been consumed. Shared by
   * the main parser and classes; `inClass` makes `\b` a backspace and every digit octal.
   */
  private escapedByte(start: number, c: number, inClass: boolean): number {
    const ch = String.fromCharCode(c);
    if (c === CH.zero || (inClass && isOctal(c))) return this.octalDigits(start, 3, c);
    const control = CONTROL_ESCAPES[ch];
    if (control !== undefined) return control;
    if (inClass && ch === 'b') return CH.bs;
    if (ch === 'x') return this.hexEscape(start);
    if (ch === 'o') return this.braceOctal(start);
    if (ch === 'c') {
      const x = this.src[this.pos++];
      if (x === undefined || x < 0x20 || x > 0x7e) {
        throw this.error(start, '\\c must be followed by a printable ASCII character');
      }
      return (x >= 0x61 && x <= 0x7a ? x - 32 : x) ^ 64;
    }
    const rejected = REJECTED_ESCAPES[ch];
    if (rejected !== undefined) throw this.error(start, rejected);
    if (isAlnum(c)) {
      const where = inClass ? ' in a character class' : '';
      throw this.error(start, `unknown escape "\\${ch}"${where}`);
    }
    return c; // escaped punctuation, space or non-ASCII byte: itself
  }

  /** Reads up to `maxDigits` octal digits, the first (`first`) already consumed. */
  private octalDigits(start: number, maxDigits: number, first: number): number {
    let n = first - CH.zero;
    for (let i = 1; i < maxDigits && isOctal(this.peek()); i++) {
      n = n * 8 + ((this.src[this.pos++] as number) - CH.zero);
    }
    if (n > 0xff) throw this.error(start, 'octal escape above \\377 is not a byte');
    return n;
  }

  private braceOctal(start: number): number {
    if (this.src[this.pos] !== CH.lbrace) throw this.error(start, '\\o must be followed by {');
    this.pos++;
    let n = 0;
    let digits = 0;
    while (isOctal(this.peek())) {
      n = Math.min(n * 8 + ((this.src[this.pos++] as number) - CH.zero), 0x10000);
      digits++;
    }
    if (this.src[this.pos] !== CH.rbrace || digits === 0) {
      throw this.error(start, '\\o{...} needs octal digits and a closing }');
    }
    this.pos++;
    if (n > 0xff) throw this.error(start, '\\o{...} above \\o{377} is not a byte');
    return n;
  }

  /** `\xHH` (zero to two hex digits) or `\x{H...}`, at most 0xFF: patterns match bytes. */
  private hexEscape(start: number): number {
    if (this.src[this.pos] === CH.lbrace) {
      this.pos++;
      let n = 0;
      while (hexValue(this.peek()) >= 0) {
        n = Math.min(n * 16 + hexValue(this.src[this.pos++]), 0x110000);
      }
      if (this.src[this.pos] !== CH.rbrace) throw this.error(start, '\\x{...} is missing its }');
      this.pos++;
      if (n > 0xff) throw this.error(start, '\\x{...} above \\x{FF} is not a byte');
      return n;
    }
    let n = 0;
    for (let i = 0; i < 2 && hexValue(this.peek()) >= 0; i++) {
      n = n * 16 + hexValue(this.src[this.pos++]);
    }
    return n;
  }

  private parseClass(start: number): Node {
    let set = new ByteSet();
    const negate = this.peek() === CH.caret;
    if (negate) this.pos++;
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw this.error(start, 'missing "]" for this "["');
      if (c === CH.rbracket && !first) {
        this.pos++;
        break;
      }
      first = false;
      this.rejectPosixClass();
      const item = this.classItem();
      if ('set' in item) {
        set.addSet(item.set);
        continue;
      }
      if (this.peek() === CH.dash && this.peek(1) !== CH.rbracket && this.peek(1) !== undefined) {
        const dashAt = this.pos;
        this.pos++;
        const hi = this.classItem();
        if ('set' in hi) {
          set.addRange(item.byte, item.byte).addRange(CH.dash, CH.dash).addSet(hi.set);
          continue;
        }
        if (hi.byte < item.byte) throw this.error(dashAt - 1, 'invalid range: end before start');
        set.addRange(item.byte, hi.byte);
        continue;
      }
      set.addRange(item.byte, item.byte);
    }
    if (this.fold) set = set.caseFolded();
    return { type: 'bytes', set: negate ? set.negated() : set };
  }

  /** `[:alpha:]`, `[=a=]`, `[.a.]` inside a class. */
  private rejectPosixClass(): void {
    if (this.peek() !== CH.lbracket) return;
    const kind = this.peek(1);
    if (kind !== CH.colon && kind !== 0x3d && kind !== CH.dot) return;
    for (let i = this.pos + 2; i < this.src.length; i++) {
      const c = this.src[i] as number;
      if (c === kind && this.src[i + 1] === CH.rbracket) {
        throw this.error(this.pos, 'POSIX classes like [:alpha:] are not supported');
      }
      if (!((c >= 0x61 && c <= 0x7a) || c === CH.caret)) return;
    }
  }

  private classItem(): ClassItem {
    const start = this.pos;
    const c = this.src[this.pos++] as number;
    if (c !== CH.backslash) return { byte: c };
    const e = this.src[this.pos++];
    if (e === undefined) throw this.error(start, 'missing "]" for this "["');
    const named = CLASS_ESCAPES[String.fromCharCode(e)];
    if (named !== undefined) return { set: named };
    if (e === 0x4e) throw this.error(start, '\\N is not allowed in a character class');
    return { byte: this.escapedByte(start, e, true) };
  }
}
