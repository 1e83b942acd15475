/**
 * Validation of untrusted rule JSON (RULES.json, hub API bodies) into the typed rule model.
 *
 * The contract: either every rule is valid and a normalised {@link RuleSet} comes back, or a
 * {@link RuleValidationError} lists every problem found, each naming the rule (index and id), the
 * field and the reason. Nothing is half-accepted, so callers can apply a rule set atomically.
 * Unknown fields are errors: a typo such as `"expires_at"` must not silently drop an expiry.
 */
import { parseIpRange } from '../ip/range.js';
import {
  type IntegerField,
  isDateTime,
  PATTERN_FIELD_SPECS,
  RATE_LIMIT_KEY_HEADER,
  RATE_LIMIT_KEY_KINDS,
  RULE_FIELDS,
  RULE_TYPE_FIELDS,
  type TextField,
  textLength,
} from './fields.js';
import type {
  Pattern,
  RateLimitKey,
  Rule,
  RuleAction,
  RuleMode,
  RuleSet,
  RuleType,
} from './model.js';
import { regexEngine } from './regex-extension.js';

export interface RuleIssue {
  /** Index of the rule in `rules`, or null for a problem with the document itself. */
  readonly index: number | null;
  readonly ruleId?: string;
  /** Dotted path of the field inside the rule, e.g. `when[1].value`. */
  readonly field: string;
  readonly reason: string;
}

export class RuleValidationError extends Error {
  constructor(readonly issues: readonly RuleIssue[]) {
    super(describeIssues(issues));
    this.name = 'RuleValidationError';
  }
}

/** One line per issue (at most `max`), e.g. `rules[2] (id "geo"): countries[0]: ...`. */
export function describeIssues(issues: readonly RuleIssue[], max = 5): string {
  const lines = issues.slice(0, max).map((i) => {
    const where =
      i.index === null
        ? ''
        : `rules[${i.index}]${i.ruleId ? ` (id ${JSON.stringify(i.ruleId)})` : ''}: `;
    return `${where}${i.field}: ${i.reason}`;
  });
  if (issues.length > max) lines.push(`... and ${issues.length - max} more`);
  return lines.join('; ');
}

const ID_PATTERN = new RegExp(RULE_FIELDS.id.pattern);
const F = RULE_FIELDS;
const P = PATTERN_FIELD_SPECS;

/** The fields each type allows, as `onlyKeys` checks them. */
const keysOf = (type: RuleType): readonly string[] => [
  ...RULE_TYPE_FIELDS[type].required,
  ...RULE_TYPE_FIELDS[type].optional,
];

/** Collects issues for one rule; every check reports and returns a usable fallback. */
class RuleChecker {
  constructor(
    private readonly issues: RuleIssue[],
    private readonly index: number,
    private readonly ruleId: string | undefined,
  ) {}

  /** Issues recorded so far (of every rule): lets a check tell whether another one failed. */
  get count(): number {
    return this.issues.length;
  }

  fail(field: string, reason: string): void {
    this.issues.push({
      index: this.index,
      ...(this.ruleId ? { ruleId: this.ruleId } : {}),
      field,
      reason,
    });
  }

  nonEmptyArray(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) {
      this.fail(field, value === undefined ? 'is required' : 'must be an array');
      return [];
    }
    if (value.length === 0) this.fail(field, 'must not be empty');
    return value;
  }

  /** A text field per its spec; returns the text as written ('' when it is not text). */
  text(value: unknown, field: string, spec: TextField): string {
    if (typeof value !== 'string') {
      if (value === undefined) this.fail(field, 'is required');
      else this.fail(field, spec.expected ?? 'must be a string');
      return '';
    }
    const length = textLength(value);
    if (spec.expected !== undefined) {
      // A field with a syntax: one reason whatever is wrong.
      const fits = length >= spec.minLength && length <= (spec.maxLength ?? Infinity);
      if (!fits || !new RegExp(spec.pattern ?? '').test(value)) this.fail(field, spec.expected);
      return value;
    }
    if (length === 0 && spec.minLength > 0) this.fail(field, 'must not be empty');
    else if (length < spec.minLength)
      this.fail(field, `must be at least ${spec.minLength} characters`);
    if (spec.maxLength !== undefined && length > spec.maxLength)
      this.fail(field, `must be at most ${spec.maxLength} characters`);
    if (spec.pattern !== undefined && !new RegExp(spec.pattern).test(value))
      this.fail(field, `must match ${spec.pattern}`);
    return value;
  }

  integer(value: unknown, field: string, spec: IntegerField): number {
    const { minimum: min, maximum: max } = spec;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.fail(field, value === undefined ? 'is required' : 'must be an integer');
      return min;
    }
    if (value < min || value > max) this.fail(field, `must be between ${min} and ${max}`);
    return value;
  }

  oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[], fallback?: T): T {
    if (value === undefined && fallback !== undefined) return fallback;
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      this.fail(field, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
      return allowed[0] as T;
    }
    return value as T;
  }

  onlyKeys(value: Record<string, unknown>, allowed: readonly string[], prefix: string): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.fail(`${prefix}${key}`, 'is not a known field');
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a rule-set document `{ "rules": [...] }` and returns it normalised (defaults filled
 * in: `mode: "enforce"`; country codes and methods upper-cased; header names lower-cased).
 * Throws {@link RuleValidationError} listing every problem.
 */
export function parseRuleSet(json: unknown): RuleSet {
  if (!isObject(json)) {
    throw new RuleValidationError([
      {
        index: null,
        field: 'rules',
        reason: 'the document must be an object with a "rules" array',
      },
    ]);
  }
  const issues: RuleIssue[] = [];
  for (const key of Object.keys(json)) {
    if (key !== 'rules') issues.push({ index: null, field: key, reason: 'is not a known field' });
  }
  if (!Array.isArray(json.rules)) {
    issues.push({ index: null, field: 'rules', reason: 'must be an array' });
    throw new RuleValidationError(issues);
  }
  const rules = parseRules(json.rules, issues);
  if (issues.length > 0) throw new RuleValidationError(issues);
  return { rules };
}

/**
 * Validates rules one at a time, in order, recording every issue and the ids seen so duplicates
 * are caught. `parseRules` uses it for a whole array; the snapshot reader feeds it between
 * event-loop turns.
 */
export class RuleListParser {
  readonly rules: Rule[] = [];
  private readonly seen = new Map<string, number>();

  constructor(readonly issues: RuleIssue[] = []) {}

  /** Validates the rule at `index`; keeps it when valid. */
  add(raw: unknown, index: number): void {
    const rule = parseRule(raw, index, this.issues);
    if (!rule) return;
    const first = this.seen.get(rule.id);
    if (first !== undefined) {
      this.issues.push({
        index,
        ruleId: rule.id,
        field: 'id',
        reason: `duplicates the id of rules[${first}]`,
      });
    } else {
      this.seen.set(rule.id, index);
    }
    this.rules.push(rule);
  }
}

/** Validates an array of rules; also used for the hub's single-rule and bulk endpoints. */
export function parseRules(input: readonly unknown[], issues: RuleIssue[] = []): Rule[] {
  const parser = new RuleListParser(issues);
  input.forEach((raw, index) => {
    parser.add(raw, index);
  });
  return parser.rules;
}

/** Validates one rule; returns undefined (after recording issues) when it is invalid. */
export function parseRule(raw: unknown, index: number, issues: RuleIssue[]): Rule | undefined {
  const before = issues.length;
  if (!isObject(raw)) {
    issues.push({ index, field: '(rule)', reason: 'must be an object' });
    return undefined;
  }
  const id = typeof raw.id === 'string' && ID_PATTERN.test(raw.id) ? raw.id : undefined;
  const c = new RuleChecker(issues, index, id);
  if (id === undefined) c.fail('id', raw.id === undefined ? 'is required' : F.id.expected);
  const type = c.oneOf(raw.type, 'type', F.type.values);
  if (issues.length > before && !F.type.values.includes(raw.type as RuleType)) return undefined;
  c.onlyKeys(raw, keysOf(type), '');
  const base = {
    id: id ?? '',
    mode: c.oneOf<RuleMode>(raw.mode, 'mode', F.mode.values, F.mode.default),
    ...parseExpiry(raw.expiresAt, c),
    ...(raw.note === undefined ? {} : { note: c.text(raw.note, 'note', F.note) }),
  };
  const rule = parseTyped(type, raw, base, c);
  return issues.length > before ? undefined : rule;
}

function parseExpiry(value: unknown, c: RuleChecker): { expiresAt?: string } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'string' || !isDateTime(value)) {
    c.fail('expiresAt', F.expiresAt.expected);
    return {};
  }
  return { expiresAt: new Date(Date.parse(value)).toISOString() };
}

type Base = { id: string; mode: RuleMode; expiresAt?: string; note?: string };

function parseTyped(
  type: RuleType,
  raw: Record<string, unknown>,
  base: Base,
  c: RuleChecker,
): Rule {
  const action = () => c.oneOf<RuleAction>(raw.action, 'action', F.action.values);
  switch (type) {
    case 'ip':
      return { ...base, type, action: action(), ranges: parseRanges(raw.ranges, c) };
    case 'country':
      return {
        ...base,
        type,
        action: action(),
        countries: c
          .nonEmptyArray(raw.countries, 'countries')
          .map((v, i) => c.text(v, `countries[${i}]`, F.countries.items).toUpperCase()),
      };
    case 'asn':
      return {
        ...base,
        type,
        action: action(),
        asns: c
          .nonEmptyArray(raw.asns, 'asns')
          .map((v, i) => c.integer(v, `asns[${i}]`, F.asns.items)),
      };
    case 'reputation':
      return {
        ...base,
        type,
        action: action(),
        lists: c
          .nonEmptyArray(raw.lists, 'lists')
          .map((v, i) => c.text(v, `lists[${i}]`, F.lists.items)),
      };
    case 'pattern':
      return { ...base, type, action: action(), when: parsePatterns(raw.when, c, true) };
    case 'rate_limit':
      return {
        ...base,
        type,
        when: raw.when === undefined ? [] : parsePatterns(raw.when, c, false),
        ...(raw.methods === undefined ? {} : { methods: parseMethods(raw.methods, c) }),
        key: parseRateLimitKey(raw.key, c),
        windowSeconds: c.integer(raw.windowSeconds, 'windowSeconds', F.windowSeconds),
        limit: c.integer(raw.limit, 'limit', F.limit),
        ...(raw.ranges === undefined ? {} : { ranges: parseRanges(raw.ranges, c) }),
      };
  }
}

function parseRanges(value: unknown, c: RuleChecker): string[] {
  return c.nonEmptyArray(value, 'ranges').map((v, i) => {
    const before = c.count;
    const text = c.text(v, `ranges[${i}]`, F.ranges.items);
    if (c.count > before) return text.trim();
    try {
      parseIpRange(text);
    } catch (error) {
      c.fail(`ranges[${i}]`, (error as Error).message);
    }
    return text.trim();
  });
}

function parseMethods(value: unknown, c: RuleChecker): string[] {
  if (!Array.isArray(value)) {
    c.fail('methods', 'must be an array');
    return [];
  }
  return value.map((v, i) => c.text(v, `methods[${i}]`, F.methods.items).toUpperCase());
}

function parseRateLimitKey(value: unknown, c: RuleChecker): RateLimitKey {
  if (!isObject(value)) {
    c.fail('key', 'must be {"kind":"ip"}, {"kind":"ip_path"} or {"kind":"header","name":"..."}');
    return { kind: 'ip' };
  }
  const kind = c.oneOf(value.kind, 'key.kind', RATE_LIMIT_KEY_KINDS);
  if (kind !== 'header') {
    c.onlyKeys(value, ['kind'], 'key.');
    return { kind };
  }
  c.onlyKeys(value, ['kind', 'name'], 'key.');
  return { kind, name: parseHeaderName(value.name, 'key.name', c) };
}

function parseHeaderName(value: unknown, field: string, c: RuleChecker): string {
  // A missing name gets the same reason as a bad one: there is only one way to be right.
  return c.text(value ?? null, field, RATE_LIMIT_KEY_HEADER).toLowerCase();
}

function parsePatterns(value: unknown, c: RuleChecker, required: boolean): Pattern[] {
  const list = required ? c.nonEmptyArray(value, 'when') : Array.isArray(value) ? value : [];
  if (!required && !Array.isArray(value)) c.fail('when', 'must be an array');
  return list.map((raw, i) => parsePattern(raw, `when[${i}]`, c));
}

function parsePattern(raw: unknown, at: string, c: RuleChecker): Pattern {
  if (!isObject(raw)) {
    c.fail(at, 'must be an object with field, match and value');
    return { field: 'path', match: 'exact', value: '' };
  }
  c.onlyKeys(raw, ['field', 'name', 'match', 'value', 'flags'], `${at}.`);
  const field = c.oneOf(raw.field, `${at}.field`, P.field.values);
  const match = c.oneOf(raw.match, `${at}.match`, P.match.values);
  const value = c.text(raw.value, `${at}.value`, P.value);
  const pattern: { -readonly [K in keyof Pattern]: Pattern[K] } = { field, match, value };
  if (field === 'header') pattern.name = parseHeaderName(raw.name, `${at}.name`, c);
  else if (field === 'query' && raw.name !== undefined)
    pattern.name = c.text(raw.name, `${at}.name`, P.queryName);
  else if (raw.name !== undefined)
    c.fail(`${at}.name`, 'is only allowed with field "header" or "query"');
  if (field === 'method' && match !== 'regex') pattern.value = value.toUpperCase();
  if (field === 'host' && match !== 'regex') pattern.value = value.toLowerCase();
  if (raw.flags !== undefined) {
    if (match !== 'regex') c.fail(`${at}.flags`, 'is only allowed with match "regex"');
    else {
      const before = c.count;
      const flags = c.text(raw.flags, `${at}.flags`, P.flags);
      if (c.count === before) pattern.flags = flags;
    }
  }
  if (match === 'regex') checkRegex(pattern, at, c);
  return pattern;
}

function checkRegex(pattern: Pattern, at: string, c: RuleChecker): void {
  const engine = regexEngine();
  if (!engine) {
    c.fail(
      `${at}.match`,
      '"regex" needs the linear-time regex engine, which this build does not include',
    );
    return;
  }
  try {
    engine.compile(pattern.value, pattern.flags ?? '');
  } catch (error) {
    c.fail(`${at}.value`, `invalid regex: ${(error as Error).message}`);
  }
}
