/**
 * Perl as an oracle (SUBSTITUTION-SPEC: "`perl -e` with `m/.../sm`"). Random rule sets are
 * turned into one Perl alternation `((?aa:rule0))|((?aa:rule1))...` whose leftmost-first match
 * is exactly ours; replacements are expanded from `@-`/`@+` in Perl. One perl process runs the
 * whole batch.
 *
 * Excluded, because Perl differs on purpose there: rules that can match empty (Perl's
 * empty-match stepping), nullable unbounded loops (see `hasNullableLoop`), and bodies ending in
 * "\n" for patterns using `^` (Perl's /m `^` does not match after a final newline; sregex's does,
 * as it cannot know the newline is final). `\s` differs only on \v, which the bodies never hold.
 * Quantified `\b{n}` is skipped too: Perl parses `\b{...}` as a Unicode boundary type.
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePattern } from '../regex/syntax/parser.js';
import { body, ruleSet } from '../test-support/regex/arbitraries.js';
import {
  hasNullableLoop,
  isNullable,
  ruleAst,
} from '../test-support/regex/backtracking-reference.js';
import { runChunks } from '../test-support/regex/run-substitution.js';
import type { SubstitutionRule } from './rule-set.js';
import { compileTemplate } from './template.js';

const PERL = '/usr/bin/perl';

const SCRIPT = String.raw`
use strict; no warnings; use JSON::PP;
binmode STDOUT;
while (my $line = <STDIN>) {
  my $c = decode_json($line);
  my $body = pack('H*', $c->{body});
  my (@alts, @base, @once, @parts, @ngroups);
  my $group = 1;
  for my $r (@{$c->{rules}}) {
    my $mods = 'aa' . ($r->{i} ? 'i' : '');
    push @alts, "((?$mods:$r->{pattern}))";
    push @base, $group; push @once, $r->{once}; push @parts, $r->{parts};
    push @ngroups, $r->{groups};
    $group += 1 + $r->{groups};
  }
  my $re = join('|', @alts);
  my %fired;
  $body =~ s{$re}{
    my $k = 0; $k++ while !defined $-[$base[$k]];
    my $whole = substr($body, $-[0], $+[0] - $-[0]);
    my $out;
    if ($once[$k] && $fired{$k}) { $out = $whole }
    else {
      $fired{$k} = 1; $out = '';
      for my $p (@{$parts[$k]}) {
        if (!ref $p) { $out .= pack('H*', $p); next }
        my $n = $p->[0];
        if ($n == 0) { $out .= $whole; next }
        next if $n > $ngroups[$k];
        my $g = $base[$k] + $n;
        $out .= substr($body, $-[$g], $+[$g] - $-[$g]) if defined $-[$g];
      }
    }
    $out
  }gsme;
  print unpack('H*', $body), "\n";
}
`;

interface PerlCase {
  readonly rules: SubstitutionRule[];
  readonly body: Buffer;
}

function perlOutputs(cases: readonly PerlCase[]): string[] {
  const input = cases
    .map(({ rules, body }) =>
      JSON.stringify({
        body: body.toString('hex'),
        rules: rules.map((r) => ({
          pattern: r.pattern,
          i: (r.flags ?? '').includes('i'),
          once: !(r.flags ?? '').includes('g'),
          groups: parsePattern(r.pattern).groupCount,
          parts: compileTemplate(r.replacement).parts.map((p) =>
            typeof p === 'number' ? [p] : Buffer.from(p).toString('hex'),
          ),
        })),
      }),
    )
    .join('\n');
  return execFileSync(PERL, ['-e', SCRIPT], { input: `${input}\n`, maxBuffer: 64 << 20 })
    .toString()
    .split('\n')
    .slice(0, cases.length);
}

function perlComparable({ rules, body }: PerlCase): boolean {
  return rules.every((r) => {
    const ast = ruleAst(r);
    if (isNullable(ast) || hasNullableLoop(ast)) return false;
    // Perl reads "\b{" as a Unicode boundary type (\b{wb}), not a quantified \b.
    if (/\\[bB]\{/.test(r.pattern)) return false;
    return !(r.pattern.includes('^') && body.at(-1) === 0x0a);
  });
}

describe('Perl oracle', () => {
  it('single-chunk output equals perl s///gsme for the comparable subset', () => {
    const cases = fc
      .sample(fc.record({ rules: ruleSet, body }), { numRuns: 3000, seed: 5 })
      .filter(perlComparable)
      .slice(0, 600);
    expect(cases.length).toBeGreaterThan(200);
    const expected = perlOutputs(cases);
    const mismatches = cases.flatMap((c, i) => {
      const ours = runChunks(c.rules, c.body).output.toString('hex');
      return ours === expected[i]
        ? []
        : [{ ...c, body: c.body.toString('hex'), ours, perl: expected[i] }];
    });
    expect(mismatches.slice(0, 3)).toEqual([]);
  });

  it('the spec examples agree with perl where perl applies', () => {
    const cases: PerlCase[] = [
      {
        rules: [{ pattern: 'abcabd', replacement: 'X', flags: 'g' }],
        body: Buffer.from('abcabcabde'),
      },
      { rules: [{ pattern: 'abce|b', replacement: 'X', flags: 'g' }], body: Buffer.from('abcd') },
      {
        rules: [
          { pattern: 'a', replacement: '[$&]', flags: 'g' },
          { pattern: 'ab', replacement: '<$&>', flags: 'g' },
        ],
        body: Buffer.from('ab'),
      },
      { rules: [{ pattern: 'ab|abc', replacement: 'X', flags: 'g' }], body: Buffer.from('abc') },
    ];
    expect(perlOutputs(cases).map((h) => Buffer.from(h, 'hex').toString())).toEqual([
      'abcXe',
      'aXcd',
      '[a]b',
      'Xc',
    ]);
  });
});
