/**
 * The rule vocabulary as data: every field of every rule type, its kind and its limits. One
 * source for the two readers of a rule: `validate.ts` checks untrusted JSON against it (and adds
 * what JSON Schema cannot say: IP ranges that parse without host bits, regexes that compile), and
 * `json-schema.ts` turns it into the JSON Schema the hub's OpenAPI document serves.
 *
 * Patterns are written in the common subset of ECMAScript and Python regexes (JSON Schema
 * `pattern`), and match the text as the operator wrote it: case-insensitive values (country
 * codes, methods, header names) are normalised by the validator after they matched. Lengths
 * count code points, as JSON Schema's `minLength`/`maxLength` do.
 */
import type {
  PatternField,
  PatternMatch,
  RateLimitKey,
  RuleAction,
  RuleMode,
  RuleType,
} from './model.js';

export interface TextField {
  readonly kind: 'text';
  readonly minLength: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  /** JSON Schema `format`, checked by the validator too. */
  readonly format?: 'date-time';
  /** null is accepted too, and means absent. */
  readonly nullable?: true;
  /** What the validator says when the pattern does not match. */
  readonly expected?: string;
  readonly description: string;
}

export interface ChoiceField<T extends string = string> {
  readonly kind: 'choice';
  readonly values: readonly T[];
  readonly default?: T;
  readonly description: string;
}

export interface IntegerField {
  readonly kind: 'integer';
  readonly minimum: number;
  readonly maximum: number;
  readonly description: string;
}

export interface ListField<Item extends Field = Field> {
  readonly kind: 'list';
  readonly items: Item;
  readonly minItems: number;
  readonly description: string;
}

/** A field whose value is an object of one of the named shapes (patterns, rate-limit keys). */
export interface ShapeField {
  readonly kind: 'shape';
  readonly shape: 'pattern' | 'rate_limit_key';
  readonly description: string;
}

export type Field = TextField | ChoiceField | IntegerField | ListField | ShapeField;

export const RULE_TYPES: readonly RuleType[] = [
  'ip',
  'country',
  'asn',
  'reputation',
  'pattern',
  'rate_limit',
];
export const RULE_MODES: readonly RuleMode[] = ['enforce', 'monitor'];
export const RULE_ACTIONS: readonly RuleAction[] = ['allow', 'block'];
export const PATTERN_FIELDS: readonly PatternField[] = [
  'path',
  'query',
  'user_agent',
  'host',
  'method',
  'header',
];
export const PATTERN_MATCHES: readonly PatternMatch[] = ['exact', 'prefix', 'contains', 'regex'];
export const RATE_LIMIT_KEY_KINDS: readonly RateLimitKey['kind'][] = ['ip', 'ip_path', 'header'];

/** RFC 3339 with seconds and a zone, as `Date.parse` reads it; the day must exist. */
const DATE_TIME =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';
/** An HTTP header name (RFC 9110 token), any case; stored lower-cased. */
const HEADER_NAME: TextField = {
  kind: 'text',
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$",
  expected: 'must be an HTTP header name',
  description: 'An HTTP header name (any case; stored lower-cased).',
};

/** Every field a rule may have, by name. */
export const RULE_FIELDS = {
  id: {
    kind: 'text',
    minLength: 1,
    maxLength: 128,
    pattern: '^[A-Za-z0-9_.:-]{1,128}$',
    expected: 'must be 1-128 characters of A-Z a-z 0-9 _ . : -',
    description: 'Unique within the site; reported with every decision.',
  },
  type: { kind: 'choice', values: RULE_TYPES, description: 'The rule type.' },
  mode: {
    kind: 'choice',
    values: RULE_MODES,
    default: 'enforce',
    description: '`enforce` acts; `monitor` only reports what it would have done.',
  },
  expiresAt: {
    kind: 'text',
    minLength: 20,
    pattern: DATE_TIME,
    format: 'date-time',
    nullable: true,
    expected: 'must be an ISO 8601 date-time such as 2026-12-31T23:59:59Z',
    description: 'When the rule stops applying (RFC 3339 with a zone); null or absent: never.',
  },
  note: { kind: 'text', minLength: 1, maxLength: 2000, description: 'For people.' },
  action: { kind: 'choice', values: RULE_ACTIONS, description: 'What a match asks for.' },
  ranges: {
    kind: 'list',
    minItems: 1,
    items: {
      kind: 'text',
      minLength: 1,
      maxLength: 100,
      // Only the characters an address can have: whether it parses is the validator's to say.
      pattern: '^[\\s0-9A-Fa-f.:/-]+$',
      description: 'An address, a CIDR without host bits, or a start-end range (IPv4 or IPv6).',
    },
    description: 'Addresses and ranges the rule applies to.',
  },
  countries: {
    kind: 'list',
    minItems: 1,
    items: {
      kind: 'text',
      minLength: 2,
      maxLength: 2,
      pattern: '^[A-Za-z]{2}$',
      expected: 'must be an ISO 3166-1 alpha-2 code such as "DE"',
      description: 'An ISO 3166-1 alpha-2 code (any case; stored upper-cased).',
    },
    description: 'Countries the client address geolocates to.',
  },
  asns: {
    kind: 'list',
    minItems: 1,
    items: { kind: 'integer', minimum: 0, maximum: 4294967295, description: 'An AS number.' },
    description: 'Autonomous systems announcing the client address.',
  },
  lists: {
    kind: 'list',
    minItems: 1,
    items: {
      kind: 'text',
      minLength: 1,
      maxLength: 128,
      description: 'The name of an uploaded reputation dataset.',
    },
    description: 'Reputation lists the client address is on.',
  },
  when: {
    kind: 'list',
    minItems: 1,
    items: { kind: 'shape', shape: 'pattern', description: 'One condition.' },
    description: 'Conditions a request must all meet.',
  },
  methods: {
    kind: 'list',
    minItems: 0,
    items: {
      kind: 'text',
      minLength: 1,
      maxLength: 20,
      pattern: '^[A-Za-z]{1,20}$',
      expected: 'must be an HTTP method such as "POST"',
      description: 'An HTTP method (any case; stored upper-cased).',
    },
    description: 'Methods that count; empty or absent: all.',
  },
  key: {
    kind: 'shape',
    shape: 'rate_limit_key',
    description: 'Which requests share a counter.',
  },
  windowSeconds: { kind: 'integer', minimum: 1, maximum: 86_400, description: 'The window.' },
  limit: {
    kind: 'integer',
    minimum: 1,
    maximum: 1_000_000_000,
    description: 'Requests per window and key, across the fleet.',
  },
} as const satisfies Record<string, Field>;

export type RuleFieldName = keyof typeof RULE_FIELDS;

export interface RuleTypeFields {
  readonly required: readonly RuleFieldName[];
  readonly optional: readonly RuleFieldName[];
  /** Fields that differ from {@link RULE_FIELDS} in this type. */
  readonly overrides?: { readonly [Name in RuleFieldName]?: Field };
  readonly description: string;
}

const COMMON_REQUIRED: readonly RuleFieldName[] = ['id', 'type'];
const COMMON_OPTIONAL: readonly RuleFieldName[] = ['mode', 'expiresAt', 'note'];

/** Which fields each rule type has. `when` of a rate limit may be empty or absent. */
export const RULE_TYPE_FIELDS: Record<RuleType, RuleTypeFields> = {
  ip: {
    required: [...COMMON_REQUIRED, 'action', 'ranges'],
    optional: COMMON_OPTIONAL,
    description: 'Allow or block client addresses.',
  },
  country: {
    required: [...COMMON_REQUIRED, 'action', 'countries'],
    optional: COMMON_OPTIONAL,
    description: 'Allow or block by the country of the client address.',
  },
  asn: {
    required: [...COMMON_REQUIRED, 'action', 'asns'],
    optional: COMMON_OPTIONAL,
    description: 'Allow or block by the autonomous system of the client address.',
  },
  reputation: {
    required: [...COMMON_REQUIRED, 'action', 'lists'],
    optional: COMMON_OPTIONAL,
    description: 'Allow or block clients on uploaded reputation lists.',
  },
  pattern: {
    required: [...COMMON_REQUIRED, 'action', 'when'],
    optional: COMMON_OPTIONAL,
    description: 'Allow or block requests matching every condition.',
  },
  rate_limit: {
    required: [...COMMON_REQUIRED, 'key', 'windowSeconds', 'limit'],
    optional: [...COMMON_OPTIONAL, 'when', 'methods', 'ranges'],
    overrides: {
      when: {
        ...RULE_FIELDS.when,
        minItems: 0,
        description: 'Conditions a request must all meet to count; empty or absent: every request.',
      },
    },
    description:
      'Limit matching requests per window and key; with `ranges`, only requests from those addresses count.',
  },
};

/** The fields of one condition (`when[i]`). Which of them apply depends on `field` and `match`. */
export const PATTERN_FIELD_SPECS = {
  field: { kind: 'choice', values: PATTERN_FIELDS, description: 'The request attribute.' },
  match: { kind: 'choice', values: PATTERN_MATCHES, description: 'How it is compared.' },
  value: {
    kind: 'text',
    minLength: 1,
    maxLength: 4096,
    description: 'What it is compared with (a regex with `match: "regex"`).',
  },
  headerName: HEADER_NAME,
  queryName: {
    kind: 'text',
    minLength: 1,
    maxLength: 256,
    description: 'A query parameter name; absent: the whole query string.',
  },
  flags: {
    kind: 'text',
    minLength: 0,
    maxLength: 1,
    pattern: '^i?$',
    expected: 'must be "" or "i"',
    description: 'Regex flags: `i` for case-insensitive.',
  },
} as const satisfies Record<string, Field>;

/** The header a `{"kind":"header"}` rate-limit key reads. */
export const RATE_LIMIT_KEY_HEADER: TextField = HEADER_NAME;

/** Text length as JSON Schema counts it: code points, not UTF-16 units. */
export function textLength(value: string): number {
  let length = 0;
  for (const _ of value) length++;
  return length;
}

/** True when `value` is an RFC 3339 date-time of {@link RULE_FIELDS}.expiresAt naming a real instant. */
export function isDateTime(value: string): boolean {
  if (!new RegExp(RULE_FIELDS.expiresAt.pattern).test(value)) return false;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCDate() === day && !Number.isNaN(Date.parse(value));
}
