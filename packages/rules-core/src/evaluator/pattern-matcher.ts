/**
 * Compiles the patterns of pattern and rate-limit rules into predicates over a request.
 *
 * Compilation happens once per snapshot; a predicate does no parsing and at most one
 * `toLowerCase` per field per request (cached in {@link RequestView}). Case rules, from the model:
 * `exact`/`prefix` are case-sensitive except on host and method; `contains` is case-insensitive.
 */
import type { Pattern } from '../rules/model.js';
import { regexEngine } from '../rules/regex-extension.js';
import type { RequestView } from './request.js';

export type RequestPredicate = (request: RequestView) => boolean;

type StringTest = (value: string) => boolean;

function stringTest(pattern: Pattern): StringTest {
  const { value } = pattern;
  switch (pattern.match) {
    case 'exact':
      return (s) => s === value;
    case 'prefix':
      return (s) => s.startsWith(value);
    case 'contains': {
      const needle = value.toLowerCase();
      // Callers pass lower-cased input for `contains` (see fieldReader).
      return (s) => s.includes(needle);
    }
    case 'regex': {
      const engine = regexEngine();
      if (!engine)
        throw new Error('a regex pattern needs the regex engine, which is not registered');
      const matcher = engine.compile(value, pattern.flags ?? '');
      return (s) => matcher.test(s);
    }
  }
}

/** Reads the field a pattern looks at, lower-cased when the match is case-insensitive. */
function fieldReader(pattern: Pattern): (request: RequestView) => string | undefined {
  const lower = pattern.match === 'contains';
  switch (pattern.field) {
    case 'path':
      return lower ? (r) => r.pathLowerCase() : (r) => r.path();
    case 'query':
      return lower ? (r) => r.queryLowerCase() : (r) => r.query();
    case 'user_agent':
      return lower ? (r) => r.userAgentLowerCase() : (r) => r.request.userAgent;
    case 'host':
      return (r) => r.host();
    case 'method':
      return lower ? (r) => r.method().toLowerCase() : (r) => r.method();
    case 'header': {
      const name = pattern.name ?? '';
      return lower ? (r) => r.header(name)?.toLowerCase() : (r) => r.header(name);
    }
  }
}

/** A predicate true when the request matches `pattern`. */
export function compilePattern(pattern: Pattern): RequestPredicate {
  const test = stringTest(pattern);
  if (pattern.field === 'query' && pattern.name !== undefined) {
    const name = pattern.name;
    const lower = pattern.match === 'contains';
    return (r) => r.queryParam(name).some((v) => test(lower ? v.toLowerCase() : v));
  }
  const read = fieldReader(pattern);
  return (r) => {
    const value = read(r);
    return value !== undefined && test(value);
  };
}

/** A predicate true when the request matches every pattern (true for an empty list). */
export function compileAll(patterns: readonly Pattern[]): RequestPredicate {
  const predicates = patterns.map(compilePattern);
  if (predicates.length === 1) return predicates[0] as RequestPredicate;
  return (r) => {
    for (const p of predicates) if (!p(r)) return false;
    return true;
  };
}
