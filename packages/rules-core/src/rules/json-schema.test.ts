/**
 * The rule JSON Schema against the validator: rules generated from the schema itself are
 * accepted, and on rules mutated at random the two agree, except where the validator checks
 * what JSON Schema cannot say (ranges that parse, regexes that compile).
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type JsonSchema, ruleJsonSchema, ruleSetJsonSchema } from './json-schema.js';
import { parseRuleSet, parseRules, type RuleIssue } from './validate.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const schemaValid = ajv.compile(ruleJsonSchema());
const withoutIdValid = ajv.compile(ruleJsonSchema({ idRequired: false }));
const ruleSetValid = ajv.compile(ruleSetJsonSchema());

function validatorIssues(rule: unknown): RuleIssue[] {
  const issues: RuleIssue[] = [];
  parseRules([rule], issues);
  return issues;
}

/** Issues only the validator can find: a range that does not parse, a regex that does not compile. */
const SEMANTIC = /^(ranges\[\d+\]|when\[\d+\]\.value)$/;

// Values JSON Schema describes by syntax only, drawn from what is valid in meaning too.
const ipv4 = fc.ipV4();
const cidr4 = fc
  .tuple(fc.nat({ max: 0xffffffff }), fc.integer({ min: 0, max: 32 }))
  .map(([address, prefix]) => {
    const network = prefix === 0 ? 0 : (address & ~((1 << (32 - prefix)) - 1)) >>> 0;
    return `${[24, 16, 8, 0].map((s) => (network >>> s) & 255).join('.')}/${prefix}`;
  });
const range4 = fc
  .tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }))
  .map(([a, b]) => [Math.min(a, b), Math.max(a, b)].map(dotted).join('-'));
const ipRange = fc.oneof(ipv4, cidr4, range4, fc.ipV6());
const safeRegex = fc.constantFrom('^/a+$', 'admin', '(wp|xmlrpc)\\.php', '[0-9]{3}');
const dateTime = fc
  .tuple(
    fc.date({ min: new Date('1970-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }),
    fc.constantFrom('Z', '+02:00', '-05:30'),
  )
  .map(([d, zone]) => d.toISOString().replace('Z', zone));

function dotted(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/**
 * An arbitrary of values valid per `schema` (the subset `json-schema.ts` emits), with the
 * semantic fields above in place of what their syntax alone would allow.
 */
function arbitraryOf(schema: JsonSchema, path: string): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.oneOf))
    return fc.oneof(...(schema.oneOf as JsonSchema[]).map((s) => arbitraryOf(s, path)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (/^ranges\[\]$/.test(path)) return ipRange;
  if (path === 'expiresAt') return fc.option(dateTime, { nil: null });
  switch (schema.type) {
    case 'string': {
      const min = schema.minLength as number;
      const max = (schema.maxLength as number | undefined) ?? 40;
      const text =
        schema.pattern === undefined
          ? fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 40) })
          : fc.stringMatching(new RegExp(schema.pattern as string));
      return text.filter((s) => [...s].length >= min && [...s].length <= max);
    }
    case 'integer':
      return fc.integer({ min: schema.minimum as number, max: schema.maximum as number });
    case 'array':
      return fc.array(arbitraryOf(schema.items as JsonSchema, `${path}[]`), {
        minLength: schema.minItems as number,
        maxLength: 3,
      });
    case 'object': {
      const properties = schema.properties as Record<string, JsonSchema>;
      const required = new Set(schema.required as string[]);
      const entries = Object.fromEntries(
        Object.entries(properties).map(([name, s]) => [name, arbitraryOf(s, name)]),
      );
      const object = fc.record(entries, {
        requiredKeys: Object.keys(properties).filter((k) => required.has(k)),
      });
      // A regex condition gets a regex that compiles.
      return object.chain((value: Record<string, unknown>) =>
        value.match === 'regex'
          ? safeRegex.map((v) => ({ ...value, value: v }))
          : fc.constant(value),
      );
    }
    default:
      throw new Error(`no arbitrary for ${JSON.stringify(schema)}`);
  }
}

const validRule = arbitraryOf(ruleJsonSchema(), '');

/** A rule changed in one place: a field dropped, added, or replaced by any JSON value. */
const mutated = fc
  .tuple(
    validRule as fc.Arbitrary<Record<string, unknown>>,
    fc.nat(),
    fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('', 'x', -1, 0, 1.5, 4294967296, '10.0.0.1/8', 'GET /', 'Germany', null),
    ),
    fc.constantFrom('drop', 'add', 'replace', 'replace-nested'),
  )
  .map(([rule, at, value, how]) => {
    const keys = Object.keys(rule);
    const key = keys[at % keys.length] as string;
    const copy: Record<string, unknown> = structuredClone(rule);
    if (how === 'drop') delete copy[key];
    else if (how === 'add') copy.extra = value;
    else if (how === 'replace') copy[key] = value;
    else {
      const inner = copy[key];
      if (Array.isArray(inner) && inner.length > 0) inner[at % inner.length] = value;
      else if (typeof inner === 'object' && inner !== null) {
        const innerKeys = Object.keys(inner);
        (inner as Record<string, unknown>)[innerKeys[at % innerKeys.length] ?? 'x'] = value;
      } else copy[key] = value;
    }
    return copy;
  });

describe('rule JSON Schema', () => {
  it('accepts only what the validator accepts: every rule drawn from the schema is valid', () => {
    fc.assert(
      fc.property(validRule, (rule) => {
        expect(schemaValid(rule), JSON.stringify(ajv.errorsText(schemaValid.errors))).toBe(true);
        expect(validatorIssues(rule)).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with the validator on mutated rules, but for what only the validator can check', () => {
    fc.assert(
      fc.property(mutated, (rule) => {
        const issues = validatorIssues(rule);
        const valid = schemaValid(rule);
        // Whatever the validator accepts, the schema describes.
        if (issues.length === 0) expect(valid, ajv.errorsText(schemaValid.errors)).toBe(true);
        // Whatever the schema accepts, the validator refuses for semantic reasons only.
        if (valid) {
          expect(
            issues.filter((i) => !SEMANTIC.test(i.field)),
            JSON.stringify(rule),
          ).toEqual([]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it.each<[string, unknown, boolean]>([
    ['an ip rule', { id: 'a', type: 'ip', action: 'block', ranges: ['10.0.0.0/8'] }, true],
    [
      'lower-case codes, methods and header names',
      {
        id: 'a',
        type: 'rate_limit',
        key: { kind: 'header', name: 'X-Api-Key' },
        windowSeconds: 60,
        limit: 10,
        methods: ['post'],
        when: [],
      },
      true,
    ],
    [
      'an expiry of null',
      { id: 'a', type: 'asn', action: 'allow', asns: [1], expiresAt: null },
      true,
    ],
    [
      'an expiry without a zone',
      { id: 'a', type: 'asn', action: 'allow', asns: [1], expiresAt: '2026-12-31T23:59' },
      false,
    ],
    [
      'a day that does not exist',
      { id: 'a', type: 'asn', action: 'allow', asns: [1], expiresAt: '2026-02-30T00:00:00Z' },
      false,
    ],
    [
      'a note of 2000 emoji (2000 code points)',
      { id: 'a', type: 'asn', action: 'allow', asns: [1], note: '🛡️'.slice(0, 2).repeat(2000) },
      true,
    ],
    [
      'flags without a regex',
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'exact', value: '/', flags: 'i' }],
      },
      false,
    ],
    [
      'a header condition without a name',
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'header', match: 'exact', value: 'x' }],
      },
      false,
    ],
    [
      'a query condition with a name',
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'query', name: 'q', match: 'regex', value: '^a', flags: 'i' }],
      },
      true,
    ],
    [
      'a country name',
      { id: 'a', type: 'country', action: 'block', countries: ['Germany'] },
      false,
    ],
    [
      'a Kelvin sign in a method',
      {
        id: 'a',
        type: 'rate_limit',
        key: { kind: 'ip' },
        windowSeconds: 1,
        limit: 1,
        methods: ['\u212A'],
      },
      false,
    ],
    [
      'an unknown field',
      { id: 'a', type: 'ip', action: 'block', ranges: ['::1'], colour: 'red' },
      false,
    ],
    [
      'rate limits scoped to ranges',
      {
        id: 'a',
        type: 'rate_limit',
        key: { kind: 'ip' },
        windowSeconds: 1,
        limit: 1,
        ranges: ['192.0.2.1'],
      },
      true,
    ],
  ])('%s: schema and validator both say %s', (_, rule, valid) => {
    expect(schemaValid(rule)).toBe(valid);
    expect(validatorIssues(rule).length === 0).toBe(valid);
  });

  it('describes rule sets, and bodies whose id the URL names', () => {
    const rule = { type: 'ip', action: 'block', ranges: ['10.0.0.0/8'] };
    expect(withoutIdValid(rule)).toBe(true);
    expect(schemaValid(rule)).toBe(false);
    expect(ruleSetValid({ rules: [{ ...rule, id: 'a' }] })).toBe(true);
    expect(parseRuleSet({ rules: [{ ...rule, id: 'a' }] }).rules).toHaveLength(1);
    expect(ruleSetValid({ rules: [], version: 2 })).toBe(false);
    expect(ruleSetValid({})).toBe(false);
  });
});
