/**
 * Compiled pattern conditions of pattern and rate-limit rules.
 *
 * Conditions are compiled once per snapshot into plain records (a field code, a match code, the
 * value) and tested by one monomorphic function with two switches: on the request path that is
 * several times faster in V8 than a closure per condition, because the call site never sees more
 * than one function shape. Each field is normalised at most once per request (cached in
 * {@link RequestView}). Case rules, from the model: `exact`/`prefix` are case-sensitive except on
 * host and method; `contains` is case-insensitive.
 */
import type { Pattern } from '../rules/model.js';
import { type RegexMatcher, regexEngine } from '../rules/regex-extension.js';
import type { RequestView } from './request.js';

export enum Field {
  Path,
  Query,
  QueryParam,
  UserAgent,
  Host,
  Method,
  Header,
}

export enum Match {
  Exact,
  Prefix,
  Contains,
  Regex,
}

/** One compiled condition. */
export interface Condition {
  readonly field: Field;
  readonly match: Match;
  /** The value to compare with; lower-cased for `contains`. */
  readonly value: string;
  /** Header or query parameter name. */
  readonly name: string;
  readonly regex: RegexMatcher | null;
}

const FIELDS: Record<Pattern['field'], Field> = {
  path: Field.Path,
  query: Field.Query,
  user_agent: Field.UserAgent,
  host: Field.Host,
  method: Field.Method,
  header: Field.Header,
};

const MATCHES: Record<Pattern['match'], Match> = {
  exact: Match.Exact,
  prefix: Match.Prefix,
  contains: Match.Contains,
  regex: Match.Regex,
};

/** Compiles one validated pattern. */
export function compileCondition(pattern: Pattern): Condition {
  const match = MATCHES[pattern.match];
  let regex: RegexMatcher | null = null;
  if (match === Match.Regex) {
    const engine = regexEngine();
    if (!engine) throw new Error('a regex pattern needs the regex engine, which is not registered');
    regex = engine.compile(pattern.value, pattern.flags ?? '');
  }
  const field =
    pattern.field === 'query' && pattern.name !== undefined
      ? Field.QueryParam
      : FIELDS[pattern.field];
  return {
    field,
    match,
    value: match === Match.Contains ? pattern.value.toLowerCase() : pattern.value,
    name: pattern.name ?? '',
    regex,
  };
}

/** Compiles the conditions of one rule (an AND). */
export function compileConditions(patterns: readonly Pattern[]): readonly Condition[] {
  return patterns.map(compileCondition);
}

/** True when the request meets every condition (true for none). */
export function meetsAll(conditions: readonly Condition[], request: RequestView): boolean {
  for (let i = 0; i < conditions.length; i++) {
    if (!meets(conditions[i] as Condition, request)) return false;
  }
  return true;
}

/** True when the request meets one condition. */
export function meets(c: Condition, request: RequestView): boolean {
  if (c.field === Field.QueryParam) return meetsQueryParam(c, request);
  const input = fieldValue(c, request);
  return input !== undefined && test(c, input);
}

/**
 * The request's value for the field `c` names, normalised as `c`'s match wants it (lower case
 * for `contains`); undefined when absent. Not for {@link Field.QueryParam} (see {@link paramValues}).
 */
export function fieldValue(c: Condition, r: RequestView): string | undefined {
  const lower = c.match === Match.Contains;
  switch (c.field) {
    case Field.Path:
      return lower ? r.pathLowerCase() : r.path();
    case Field.Query:
      return lower ? r.queryLowerCase() : r.query();
    case Field.UserAgent:
      return lower ? r.userAgentLowerCase() : r.request.userAgent;
    case Field.Host:
      return r.host();
    case Field.Method:
      return lower ? r.method().toLowerCase() : r.method();
    case Field.Header:
      return lower ? r.headerLowerCase(c.name) : r.header(c.name);
    default:
      return undefined;
  }
}

/** True when `input` (already normalised by {@link fieldValue}) satisfies `c`. */
export function test(c: Condition, input: string): boolean {
  switch (c.match) {
    case Match.Exact:
      return input === c.value;
    case Match.Prefix:
      return input.startsWith(c.value);
    case Match.Contains:
      return input.includes(c.value);
    case Match.Regex:
      return (c.regex as RegexMatcher).test(input);
  }
}

function meetsQueryParam(c: Condition, r: RequestView): boolean {
  const values = paramValues(c, r);
  for (let i = 0; i < values.length; i++) {
    if (test(c, values[i] as string)) return true;
  }
  return false;
}

/** The decoded values of the query parameter `c` names, lower-cased for `contains`. */
export function paramValues(c: Condition, r: RequestView): readonly string[] {
  const values = r.queryParam(c.name);
  if (c.match === Match.Contains)
    for (let i = 0; i < values.length; i++) values[i] = (values[i] as string).toLowerCase();
  return values;
}
