import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Pattern } from '../rules/model.js';
import { MEMO_MAX_VALUE, PatternIndex } from './pattern-index.js';
import { compileConditions, meetsAll } from './pattern-matcher.js';
import { type RequestInfo, RequestView } from './request.js';

/** Few letters, so that generated values and requests often agree. */
const text = fc.string({ unit: fc.constantFrom('a', 'B', '/', '%41', '.', 'x'), maxLength: 4 });

const pattern: fc.Arbitrary<Pattern> = fc.oneof(
  fc.record({
    field: fc.constantFrom('path', 'query', 'user_agent', 'host', 'method' as const),
    match: fc.constantFrom('exact', 'prefix', 'contains' as const),
    value: text,
  }),
  fc.record({
    field: fc.constant('header' as const),
    name: fc.constantFrom('referer', 'x-test'),
    match: fc.constantFrom('exact', 'prefix', 'contains' as const),
    value: text,
  }),
  fc.record({
    field: fc.constant('query' as const),
    name: fc.constantFrom('a', 'q'),
    match: fc.constantFrom('exact', 'prefix', 'contains' as const),
    value: text,
  }),
  fc.record({
    field: fc.constantFrom('path', 'user_agent' as const),
    match: fc.constant('regex' as const),
    value: fc.constantFrom('^/a', 'B+x', '(a|x)$', '[./]a'),
  }),
);

const request: fc.Arbitrary<RequestInfo> = fc.record({
  ip: fc.constant('192.0.2.1'),
  method: fc.constantFrom('GET', 'get', 'a', 'B'),
  host: text,
  path: text.map((p) => `/${p}`),
  query: fc.constantFrom('', 'a=a', 'a=x&q=B', 'q=a&q=aB', 'a=%41', 'q'),
  userAgent: text,
  headers: fc.record({ referer: text, 'x-test': text }, { requiredKeys: [] }),
});

function naive(rules: readonly (readonly Pattern[])[], info: RequestInfo): number[] {
  const view = new RequestView(info);
  return rules.flatMap((when, i) => (meetsAll(compileConditions(when), view) ? [i] : []));
}

describe('PatternIndex', () => {
  it.each([
    ['the default field memo', undefined],
    ['a two-entry memo, swapped constantly', 2],
    ['no memo', 0],
  ])('finds exactly the rules whose every condition holds, in rule order, with %s', (_, memo) => {
    fc.assert(
      fc.property(
        fc.array(fc.array(pattern, { minLength: 1, maxLength: 3 }), { maxLength: 12 }),
        // requests drawn from a small alphabet repeat field values, so the memos are hit
        fc.array(request, { minLength: 1, maxLength: 12 }),
        (rules, requests) => {
          const index = new PatternIndex(
            rules.map((when) => ({ conditions: compileConditions(when) })),
            { memo },
          );
          const view = new RequestView(requests[0] as RequestInfo);
          // twice over, the second time each request twice in a row: the second pass answers
          // from the memos, the repeats from the value each memo looked up last
          const repeated = requests.flatMap((info) => [info, { ...info }]);
          for (const info of [...requests, ...repeated])
            expect([...index.matching(view.reset(info))]).toEqual(naive(rules, info));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('evaluates values too long to remember every time, and right', () => {
    const index = new PatternIndex([
      {
        conditions: compileConditions([
          { field: 'user_agent', match: 'contains', value: 'sqlmap' },
        ]),
      },
    ]);
    const ua = (tail: string) => `${'Mozilla/5.0 '.repeat(60)}${tail}`;
    expect(ua('').length).toBeGreaterThan(MEMO_MAX_VALUE);
    const view = (userAgent: string) =>
      new RequestView({
        ip: '',
        method: 'GET',
        host: '',
        path: '/',
        query: '',
        userAgent,
        headers: {},
      });
    expect(index.matching(view(ua('SQLMap/1.7')))).toEqual([0]);
    expect(index.matching(view(ua('curl/8')))).toEqual([]);
    expect(index.matching(view(ua('SQLMap/1.7')))).toEqual([0]);
  });

  it('looks exact values up, and still tests the other conditions of their rules', () => {
    const rules = [
      [
        { field: 'method', match: 'exact', value: 'POST' },
        { field: 'path', match: 'prefix', value: '/login' },
      ],
      [{ field: 'path', match: 'exact', value: '/login' }],
    ] satisfies Pattern[][];
    const index = new PatternIndex(rules.map((when) => ({ conditions: compileConditions(when) })));
    const view = (method: string, path: string) =>
      new RequestView({ ip: '', method, host: '', path, query: '', userAgent: '', headers: {} });
    expect(index.matching(view('POST', '/login'))).toEqual([0, 1]);
    expect(index.matching(view('post', '/login/x'))).toEqual([0]);
    expect(index.matching(view('POST', '/'))).toEqual([]);
  });

  it('counts a rule once when a repeated query parameter meets it twice', () => {
    const index = new PatternIndex([
      {
        conditions: compileConditions([{ field: 'query', name: 'q', match: 'exact', value: 'a' }]),
      },
    ]);
    const info = {
      ip: '',
      method: 'GET',
      host: '',
      path: '/',
      query: 'q=a&q=a',
      userAgent: '',
      headers: {},
    };
    expect(index.matching(new RequestView(info))).toEqual([0]);
  });
});
