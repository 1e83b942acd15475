/**
 * JSON Schema of rules and rule sets, generated from the field definitions the validator reads
 * (`fields.ts`), so the hub's OpenAPI document and `validate.ts` cannot drift apart.
 *
 * The schemas use the subset OpenAPI 3.0 shares with JSON Schema (`nullable` rather than type
 * arrays, one-value `enum` rather than `const`, no `if`/`then`). What they cannot say, the
 * validator still checks: that each range parses (no host bits, start before end), that a regex
 * compiles, and (in the hub) that a reputation list was uploaded. A body valid per the schema is
 * refused for those reasons only (`json-schema.test.ts` holds both to it).
 */
import {
  type Field,
  PATTERN_FIELD_SPECS,
  PATTERN_FIELDS,
  PATTERN_MATCHES,
  RATE_LIMIT_KEY_HEADER,
  RULE_FIELDS,
  RULE_TYPE_FIELDS,
  RULE_TYPES,
  type RuleFieldName,
} from './fields.js';
import type { PatternField, PatternMatch } from './model.js';

/** A JSON Schema object (the OpenAPI 3.0 subset). */
export type JsonSchema = { readonly [keyword: string]: unknown };

export interface RuleSchemaOptions {
  /** False for a body whose id the URL names (`PUT .../rules/:ruleId`). Default true. */
  readonly idRequired?: boolean;
}

/** One rule: one of the rule types, each with exactly its fields. */
export function ruleJsonSchema(options: RuleSchemaOptions = {}): JsonSchema {
  return {
    description:
      'A rule (rules-core). Also checked beyond this schema: ranges must parse (no host bits, start before end), regexes must compile, reputation lists must exist.',
    oneOf: RULE_TYPES.map((type) => {
      const spec = RULE_TYPE_FIELDS[type];
      const field = (name: RuleFieldName): JsonSchema =>
        name === 'type'
          ? { type: 'string', enum: [type] }
          : fieldSchema(spec.overrides?.[name] ?? RULE_FIELDS[name]);
      const names = [...spec.required, ...spec.optional];
      return {
        type: 'object',
        title: type,
        description: spec.description,
        properties: Object.fromEntries(names.map((name) => [name, field(name)])),
        required: spec.required.filter((name) => options.idRequired !== false || name !== 'id'),
        additionalProperties: false,
      };
    }),
  };
}

/** The rule-set document `{"rules": [...]}`. */
export function ruleSetJsonSchema(rule: JsonSchema = ruleJsonSchema()): JsonSchema {
  return {
    type: 'object',
    description: 'A rule set, as RULES.json holds it and the hub exports it.',
    properties: { rules: { type: 'array', items: rule } },
    required: ['rules'],
    additionalProperties: false,
  };
}

/** The schema of one field definition. */
export function fieldSchema(field: Field): JsonSchema {
  switch (field.kind) {
    case 'text':
      return {
        type: 'string',
        minLength: field.minLength,
        ...(field.maxLength === undefined ? {} : { maxLength: field.maxLength }),
        ...(field.pattern === undefined ? {} : { pattern: field.pattern }),
        ...(field.format === undefined ? {} : { format: field.format }),
        ...(field.nullable ? { nullable: true } : {}),
        description: field.description,
      };
    case 'choice':
      return {
        type: 'string',
        enum: [...field.values],
        ...(field.default === undefined ? {} : { default: field.default }),
        description: field.description,
      };
    case 'integer':
      return {
        type: 'integer',
        minimum: field.minimum,
        maximum: field.maximum,
        description: field.description,
      };
    case 'list':
      return {
        type: 'array',
        items: fieldSchema(field.items),
        minItems: field.minItems,
        description: field.description,
      };
    case 'shape':
      return field.shape === 'pattern'
        ? patternSchema(field.description)
        : rateLimitKeySchema(field.description);
  }
}

/**
 * A condition: which of `name` and `flags` it may have depends on `field` (a header needs a
 * name, a query may have one, the others none) and `match` (flags only with a regex), so it is
 * one of six shapes.
 */
function patternSchema(description: string): JsonSchema {
  const P = PATTERN_FIELD_SPECS;
  const plain = PATTERN_FIELDS.filter((f) => f !== 'header' && f !== 'query');
  const byField: [readonly PatternField[], JsonSchema | undefined, boolean][] = [
    [plain, undefined, false],
    [['header'], fieldSchema(P.headerName), true],
    [['query'], fieldSchema(P.queryName), false],
  ];
  const byMatch: [readonly PatternMatch[], boolean][] = [
    [PATTERN_MATCHES.filter((m) => m !== 'regex'), false],
    [['regex'], true],
  ];
  return {
    description,
    oneOf: byField.flatMap(([fields, name, nameRequired]) =>
      byMatch.map(([matches, flags]) => ({
        type: 'object',
        properties: {
          field: { ...fieldSchema(P.field), enum: [...fields] },
          ...(name ? { name } : {}),
          match: { ...fieldSchema(P.match), enum: [...matches] },
          value: fieldSchema(P.value),
          ...(flags ? { flags: fieldSchema(P.flags) } : {}),
        },
        required: ['field', 'match', 'value', ...(nameRequired ? ['name'] : [])],
        additionalProperties: false,
      })),
    ),
  };
}

function rateLimitKeySchema(description: string): JsonSchema {
  const kind = (value: string) => ({ type: 'string', enum: [value] });
  return {
    description,
    oneOf: [
      {
        type: 'object',
        properties: { kind: kind('ip') },
        required: ['kind'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { kind: kind('ip_path') },
        required: ['kind'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { kind: kind('header'), name: fieldSchema(RATE_LIMIT_KEY_HEADER) },
        required: ['kind', 'name'],
        additionalProperties: false,
      },
    ],
  };
}
