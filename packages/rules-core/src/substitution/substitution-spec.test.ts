// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${1}" is replacement-template syntax here, not JS
/**
 * SUBSTITUTION-SPEC, point by point. Every expectation is checked with the whole body in one
 * chunk, with 1-byte chunks and with every two-chunk split (`expectAllChunkings`).
 */
import { describe, expect, it } from 'vitest';
import { referenceSubstitute } from '../test-support/regex/backtracking-reference.js';
import {
  type Chunking,
  chunkings,
  runChunks,
  substitute,
} from '../test-support/regex/run-substitution.js';
import { compileRuleSet, type RuleSetOptions, type SubstitutionRule } from './rule-set.js';
import { Substituter, type SubstituterOptions } from './substituter.js';

const g = (pattern: string, replacement: string, flags = 'g'): SubstitutionRule => ({
  pattern,
  replacement,
  flags,
});

function expectAllChunkings(
  rules: readonly SubstitutionRule[],
  body: string,
  expected: string,
  options: RuleSetOptions & SubstituterOptions = {},
) {
  for (const chunking of chunkings(Buffer.byteLength(body, 'latin1'))) {
    const out = substitute(rules, body, chunking, options);
    expect(out, `chunking ${JSON.stringify(chunking)}`).toBe(expected);
  }
  // The independent reference agrees (it has no buffer limit).
  if (options.maxBufferedBytes === undefined) {
    const ref = referenceSubstitute(rules, Buffer.from(body, 'latin1'), options.matchKind);
    expect(ref.toString('latin1'), 'reference').toBe(expected);
  }
}

describe('the test cases listed in the spec', () => {
  it('abcabd -> X on abcabcabde gives abcXe', () => {
    expectAllChunkings([g('abcabd', 'X')], 'abcabcabde', 'abcXe');
  });

  it('abce|b -> X on abcd gives aXcd', () => {
    expectAllChunkings([g('abce|b', 'X')], 'abcd', 'aXcd');
  });

  it('rules a->[$&], ab-><$&> on ab give [a]b; in the other order <ab>', () => {
    expectAllChunkings([g('a', '[$&]'), g('ab', '<$&>')], 'ab', '[a]b');
    expectAllChunkings([g('ab', '<$&>'), g('a', '[$&]')], 'ab', '<ab>');
  });

  it('ab|abc -> X on abc gives Xc', () => {
    expectAllChunkings([g('ab|abc', 'X')], 'abc', 'Xc');
  });

  it('x* -> X (g) on ax gives XaXX', () => {
    expectAllChunkings([g('x*', 'X')], 'ax', 'XaXX');
  });

  it('^\\s+|\\s+$ -> "" (g) trims every line, across chunk splits', () => {
    expectAllChunkings(
      [g('^\\s+|\\s+$', '')],
      '  one  \n\t two \t\n   \nthree ',
      'one\ntwo\nthree',
    );
  });

  it('é split between its two bytes still matches', () => {
    const body = Buffer.from('café, été', 'utf8');
    const expected = Buffer.from('cafE, EtE', 'utf8');
    for (const chunking of chunkings(body.length)) {
      expect(runChunks([g('é', 'E')], body, chunking).output.equals(expected)).toBe(true);
    }
  });

  it('Latin-1 and invalid UTF-8 bodies pass byte-exact', () => {
    const body = Buffer.from([
      0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x80, 0x00, 0x0a,
    ]);
    for (const chunking of chunkings(body.length)) {
      expect(runChunks([g('zzz', 'Y')], body, chunking).output.equals(body)).toBe(true);
      const replaced = runChunks([g('\\xe9', 'E')], body, chunking).output;
      expect(replaced.equals(Buffer.from([0x63, 0x61, 0x66, 0x45, ...body.subarray(4)]))).toBe(
        true,
      );
    }
  });

  it('a body larger than the buffer limit with a.+a hits the limit exactly as in 13', () => {
    const limit = 64;
    const body = `x a${'-'.repeat(100)}a y a-a`;
    for (const chunking of ['whole', 'bytes', [1], [5, 70], [50, 51, 52]] satisfies Chunking[]) {
      const run = runChunks([g('a.+a', 'X')], body, chunking, { maxBufferedBytes: limit });
      // The partial match starting at "a" outgrows 64 bytes: warn once, emit unchanged, and stop
      // replacing (the later "a-a" is not replaced).
      expect(run.output.toString('latin1')).toBe(body);
      expect(run.warnings).toHaveLength(1);
      expect(run.substituter.stats.bufferLimitHit).toBe(true);
    }
    // Under the limit the same body is replaced (greedy: up to the last "a").
    expect(substitute([g('a.+a', 'X')], body)).toBe('x X');
  });
});

describe('1. rules and flags', () => {
  it('without g a rule fires once per body; with g every time', () => {
    expectAllChunkings([g('a', 'X', '')], 'banana', 'bXnana');
    expectAllChunkings([g('a', 'X')], 'banana', 'bXnXnX');
  });

  it('i folds ASCII letters only', () => {
    expectAllChunkings([g('abc', 'X', 'gi')], 'ABC aBc abc', 'X X X');
    const body = Buffer.from('\xe9\xc9', 'latin1');
    expect(runChunks([g('\\xe9', 'E', 'gi')], body).output.toString('latin1')).toBe('E\xc9');
  });

  it('any other flag is a configuration error naming the rule', () => {
    expect(() => compileRuleSet([g('a', 'b', 'gm')])).toThrow(
      'rule 0 ("a"): unknown flag "m" (flags are a subset of "gi")',
    );
  });
});

describe('3-4. bytes, lines, text and word boundaries', () => {
  it('. matches any byte, newline included', () => {
    expectAllChunkings([g('a.b', 'X')], 'a\nb a\x00b', 'X X');
  });

  it('^ and $ are per line; $ also at the end of the body', () => {
    expectAllChunkings([g('^', '>')], 'a\nb\n', '>a\n>b\n>');
    expectAllChunkings([g('$', '<')], 'a\nb', 'a<\nb<');
  });

  it('\\A and \\z are the start and end of the whole body', () => {
    expectAllChunkings([g('\\A.|.\\z', '#')], 'ab\ncd', '#b\nc#');
  });

  it('\\b and \\B are ASCII word boundaries, resolved across chunks and at the end', () => {
    expectAllChunkings([g('\\bcat\\b', 'X')], 'cat concat cat_ cat.cat', 'X concat cat_ X.X');
    expectAllChunkings([g('\\B', '-')], 'ab c', 'a-b c');
    expectAllChunkings([g('a\\b', 'X')], 'a\xe9', 'X\xe9');
  });

  it('\\w \\d are ASCII; \\s is [ \\f\\n\\r\\t] without \\v', () => {
    expectAllChunkings([g('\\w+', 'W')], 'ab_9 \xe9x', 'W \xe9W');
    expectAllChunkings([g('\\d', 'D')], '1a2', 'DaD');
    expectAllChunkings([g('\\s', '_')], ' \f\n\r\t\v', '_____\v');
  });
});

describe('5. supported syntax', () => {
  const cases: Array<[string, string, string]> = [
    ['[a-c]+', 'xabcbx', 'x<abcb>x'],
    ['[^a-c]', 'ad', 'a<d>'],
    ['(a)(?:b)', 'ab', '<ab>'],
    ['a{2}', 'aaaaa', '<aa><aa>a'],
    ['a{2,}', 'aaaaa', '<aaaaa>'],
    ['a{1,2}', 'aaa', '<aa><a>'],
    ['a{1,2}?', 'aaa', '<a><a><a>'],
    ['a+?b', 'aab', '<aab>'],
    ['<.*?>', '<a><b>', '<<a>><<b>>'],
    ['<.*>', '<a><b>', '<<a><b>>'],
    ['a??b', 'ab', '<ab>'],
    ['\\x41\\x{42}\\103\\o{104}', 'ABCD', '<ABCD>'],
    ['\\t\\n\\r\\f\\e\\a', '\t\n\r\f\x1b\x07', '<\t\n\r\f\x1b\x07>'],
    ['\\h+', 'a \t\xa0b', 'a< \t\xa0>b'],
    ['\\H', ' a', ' <a>'],
    ['\\v', '\x0b\x85', '<\x0b><\x85>'],
    ['\\V', '\na', '\n<a>'],
    ['\\N+', 'ab\ncd', '<ab>\n<cd>'],
    ['\\cA\\cz', '\x01\x1a', '<\x01\x1a>'],
    ['\\0\\012', '\x00\n', '<\x00\n>'],
    ['[\\d\\s-]+', 'a1 -2b', 'a<1 -2>b'],
    ['[]a]', ']', '<]>'],
    ['a{,2}', 'a{,2}', '<a{,2}>'],
    ['\\.\\*\\$', '.*$', '<.*$>'],
  ];
  it.each(cases)('%j on %j gives %j', (pattern, body, expected) => {
    expectAllChunkings([g(pattern, '<$&>')], body, expected);
  });
});

describe('6. unsupported syntax is rejected at load, naming rule, position and construct', () => {
  const cases: Array<[string, string]> = [
    ['a(?=b)', 'position 1: lookahead is not supported'],
    ['a(?!b)', 'position 1: lookahead is not supported'],
    ['(?<=a)b', 'position 0: lookbehind is not supported'],
    ['(?<!a)b', 'position 0: lookbehind is not supported'],
    ['(a)\\1', 'position 3: backreferences (\\1) are not supported'],
    ['x(?i)a', 'position 1: inline flags like (?i) are not supported'],
    ['(?i:a)', 'position 0: inline flags like (?i) are not supported'],
    ['(?<name>a)', 'position 0: named groups are not supported'],
    ['(?P<name>a)', 'position 0: named groups are not supported'],
    ['[[:alpha:]]', 'position 1: POSIX classes like [:alpha:] are not supported'],
    ['\\p{L}', 'position 0: Unicode properties (\\p) are not supported'],
    ['a\\Z', 'position 1: \\Z is not supported (use \\z or $)'],
    ['\\Ga', 'position 0: \\G is not supported'],
    ['a{500}', 'position 1: repetition count above the sregex limit of 499'],
    ['a**', 'position 2: nested quantifiers are not supported'],
    ['a*+', 'position 2: possessive quantifiers are not supported'],
    ['*a', 'position 0: quantifier "*" has nothing to repeat'],
    ['(a', 'position 0: missing ")" for this "("'],
    ['a)', 'position 1: unmatched ")"'],
    ['[a', 'position 0: missing "]" for this "["'],
    ['[z-a]', 'position 1: invalid range: end before start'],
    ['\\', 'position 0: trailing backslash'],
    ['\\y', 'position 0: unknown escape "\\y"'],
    ['\\x{100}', 'position 0: \\x{...} above \\x{FF} is not a byte'],
  ];
  it.each(cases)('%j: %s', (pattern, message) => {
    expect(() => compileRuleSet([g('ok', 'x'), g(pattern, 'x')])).toThrow(
      `rule 1 (${JSON.stringify(pattern)}): ${message}`,
    );
  });
});

describe('7. leftmost-first: earliest start, then earlier rule, then Perl order', () => {
  it('the earliest start wins whatever the rule order', () => {
    expectAllChunkings([g('bc', 'X'), g('ab', 'Y')], 'abc', 'Yc');
  });

  it('inside one rule, alternation order and greediness decide the end', () => {
    expectAllChunkings([g('abc|ab', 'X')], 'abcd', 'Xd');
    expectAllChunkings([g('a+?', 'X')], 'aa', 'XX');
  });

  it('matches never overlap', () => {
    expectAllChunkings([g('aba', 'X')], 'ababa', 'Xba');
  });
});

describe('8. leftmost-longest (opt-in)', () => {
  const longest = { matchKind: 'leftmost-longest' } as const;
  it('the longer match wins at the same start, across rules and alternatives', () => {
    expectAllChunkings([g('a', '[$&]'), g('ab', '<$&>')], 'ab', '<ab>', longest);
    expectAllChunkings([g('ab|abc', 'X')], 'abc', 'X', longest);
    expectAllChunkings([g('a+?', 'X')], 'aa', 'X', longest);
  });

  it('ties go to the earlier rule; the earliest start still wins', () => {
    expectAllChunkings([g('ab', '1'), g('a.', '2')], 'ab', '1', longest);
    expectAllChunkings([g('bcd', 'X'), g('ab', 'Y')], 'abcd', 'Ycd', longest);
  });
});

describe('9. empty matches', () => {
  it('an empty match is replaced, the next byte copied, and the search resumes after it', () => {
    expectAllChunkings([g('x*', '-')], 'xax', '--a--');
    expectAllChunkings([g('x*?', '-')], 'xx', '-x-x-');
    expectAllChunkings([g('', '.')], 'ab', '.a.b.');
  });

  it('an empty match at the end of the body counts', () => {
    expectAllChunkings([g('$', 'E')], '', 'E');
    expectAllChunkings([g('b*', 'E')], 'ab', 'EaEE');
  });
});

describe('10. once-rules', () => {
  it('a fired once-rule keeps competing but emits its later matches unchanged', () => {
    expectAllChunkings([g('a', 'X', ''), g('ab', 'Y')], 'ab ab', 'Xb ab');
    expectAllChunkings([g('a', 'X', ''), g('b', 'Y')], 'abab', 'XYaY');
  });

  it('once every rule is once-only and has fired, the rest passes through untouched', () => {
    const run = runChunks([g('a', 'X', ''), g('b', 'Y', '')], 'ab ab ab', 'bytes');
    expect(run.output.toString()).toBe('XY ab ab');
    expect(run.substituter.stats.rules.map((r) => r.matches)).toEqual([1, 1]);
  });
});

describe('11. replacement templates', () => {
  const cases: Array<[string, string, string, string]> = [
    ['(\\w+)=(\\w+)', '$2=$1', 'a=b', 'b=a'],
    ['(\\w+)=(\\w+)', '${2}${1}', 'a=b', 'ba'],
    ['a(b)?', '[$1]', 'a ab', '[] [b]'],
    ['(a)', '[$12]', 'a', '[]'],
    ['(a)', '[$3]', 'a', '[]'],
    ['a', '$$&', 'a', '$&'],
    ['a', '${&}$&', 'a', 'aa'],
    ['a', '\\1\\n', 'a', '\\1\\n'],
    ['((a)|(b))+', '$1,$2,$3', 'ab', 'b,a,b'],
  ];
  it.each(cases)('%j -> %j on %j gives %j', (pattern, replacement, body, expected) => {
    expectAllChunkings([g(pattern, replacement)], body, expected);
  });

  it('a trailing lone $ and nginx variables are configuration errors', () => {
    expect(() => compileRuleSet([g('a', 'x$')])).toThrow(
      'rule 0 ("a"): replacement position 1: a trailing lone "$" (write "$$" for a dollar)',
    );
    expect(() => compileRuleSet([g('a', '$host')])).toThrow(
      'nginx variables ("$host") are not supported',
    );
    expect(() => compileRuleSet([g('a', '${host}')])).toThrow(
      'nginx variables ("${host}") are not supported',
    );
  });
});

describe('12-14. streaming', () => {
  it('emits bytes that cannot be part of a match at once, holding only live partial matches', () => {
    const set = compileRuleSet([g('abc', 'X')]);
    const s = new Substituter(set);
    expect(s.feed(Buffer.from('xxab')).toString()).toBe('xx');
    expect(s.feed(Buffer.from('aab')).toString()).toBe('aba');
    expect(s.feed(Buffer.from('cy')).toString()).toBe('Xy');
    expect(s.end().toString()).toBe('');
  });

  it('a match that may still grow is held until it cannot', () => {
    const set = compileRuleSet([g('a+', 'X')]);
    const s = new Substituter(set);
    expect(s.feed(Buffer.from('baa')).toString()).toBe('b');
    expect(s.feed(Buffer.from('a')).toString()).toBe('');
    expect(s.end().toString()).toBe('X');
  });

  it('at the end of the body $, \\z and \\b are resolved and pending matches settled', () => {
    expectAllChunkings([g('b$', 'X'), g('c\\z', 'Y'), g('d\\b', 'Z')], 'b\nc d', 'X\nc Z');
    expectAllChunkings([g('b$', 'X'), g('c\\z', 'Y'), g('d\\b', 'Z')], 'bb cd', 'bb cZ');
    expectAllChunkings([g('c\\z', 'Y')], 'cc', 'cY');
  });

  it('statistics say which rules matched and how often', () => {
    const run = runChunks([g('a', 'X'), g('z', 'Z'), g('b', 'Y', '')], 'abab', [1, 3]);
    expect(run.substituter.stats).toMatchObject({
      bytesIn: 4,
      bytesOut: 4,
      matchedRules: [0, 2],
      bufferLimitHit: false,
    });
    expect(run.substituter.stats.rules.map((r) => [r.matches, r.replacements])).toEqual([
      [2, 2],
      [0, 0],
      [2, 1],
    ]);
  });
});
