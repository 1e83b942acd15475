import { afterEach, describe, expect, it } from 'vitest';
import { sregexEngine } from '../regex/waf-engine.js';
import { registerRegexEngine } from './regex-extension.js';
import { parseRuleSet, type RuleIssue, RuleValidationError } from './validate.js';

function issuesOf(json: unknown): readonly RuleIssue[] {
  try {
    parseRuleSet(json);
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues;
  }
  throw new Error('expected the rule set to be rejected');
}

const one = (rule: Record<string, unknown>) => issuesOf({ rules: [rule] });

describe('parseRuleSet', () => {
  it('accepts every rule type and fills in defaults', () => {
    const set = parseRuleSet({
      rules: [
        {
          id: 'office',
          type: 'ip',
          action: 'allow',
          ranges: ['203.0.113.0/24', ' 2001:db8::/32 '],
        },
        { id: 'geo', type: 'country', action: 'block', countries: ['cn', 'RU'], mode: 'monitor' },
        { id: 'as', type: 'asn', action: 'block', asns: [13335] },
        {
          id: 'rep',
          type: 'reputation',
          action: 'block',
          lists: ['firehol_level1'],
          expiresAt: '2030-01-01T00:00:00Z',
        },
        {
          id: 'ua',
          type: 'pattern',
          action: 'block',
          when: [
            { field: 'header', name: 'X-Api-Key', match: 'exact', value: 'k' },
            { field: 'method', match: 'exact', value: 'post' },
            { field: 'host', match: 'exact', value: 'Example.COM' },
          ],
          note: 'scanner',
        },
        {
          id: 'login',
          type: 'rate_limit',
          methods: ['post'],
          key: { kind: 'header', name: 'X-User' },
          windowSeconds: 60,
          limit: 5,
        },
      ],
    });
    expect(set.rules.map((r) => r.mode)).toEqual([
      'enforce',
      'monitor',
      'enforce',
      'enforce',
      'enforce',
      'enforce',
    ]);
    expect(set.rules[0]).toMatchObject({ ranges: ['203.0.113.0/24', '2001:db8::/32'] });
    expect(set.rules[1]).toMatchObject({ countries: ['CN', 'RU'] });
    expect(set.rules[3]).toMatchObject({ expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(set.rules[4]).toMatchObject({
      when: [
        { field: 'header', name: 'x-api-key', value: 'k' },
        { field: 'method', value: 'POST' },
        { field: 'host', value: 'example.com' },
      ],
    });
    expect(set.rules[5]).toMatchObject({
      methods: ['POST'],
      key: { kind: 'header', name: 'x-user' },
      when: [],
    });
  });

  it('names the rule index, id, field and reason', () => {
    const issues = issuesOf({
      rules: [
        { id: 'ok', type: 'ip', action: 'block', ranges: ['10.0.0.0/8'] },
        { id: 'bad-cidr', type: 'ip', action: 'block', ranges: ['10.0.0.0/8', '10.0.0.1/8'] },
      ],
    });
    expect(issues).toEqual([
      {
        index: 1,
        ruleId: 'bad-cidr',
        field: 'ranges[1]',
        reason: 'invalid IP range "10.0.0.1/8": host bits are set; did you mean 10.0.0.0/8?',
      },
    ]);
  });

  it('reports every problem at once, and the message lists them', () => {
    try {
      parseRuleSet({
        rules: [{ id: 'x', type: 'asn', action: 'deny', asns: [-1, 'x'] }, { type: 'country' }],
      });
      expect.unreachable();
    } catch (error) {
      const { issues, message } = error as RuleValidationError;
      expect(issues.map((i) => `${i.index}:${i.field}`)).toEqual([
        '0:action',
        '0:asns[0]',
        '0:asns[1]',
        '1:id',
        '1:action',
        '1:countries',
      ]);
      expect(message).toContain('rules[0] (id "x"): action: must be one of "allow", "block"');
    }
  });

  it('rejects unknown fields, in rules, patterns and the document', () => {
    expect(
      one({ id: 'a', type: 'ip', action: 'block', ranges: ['1.2.3.4'], expires_at: 'x' }),
    ).toMatchObject([{ field: 'expires_at', reason: 'is not a known field' }]);
    expect(
      one({
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'exact', value: '/', extra: 1 }],
      }),
    ).toMatchObject([{ field: 'when[0].extra' }]);
    expect(issuesOf({ rules: [], version: 2 })).toMatchObject([{ index: null, field: 'version' }]);
  });

  it('rejects duplicate ids', () => {
    const rule = { id: 'same', type: 'asn', action: 'block', asns: [1] };
    expect(issuesOf({ rules: [rule, rule] })).toEqual([
      { index: 1, ruleId: 'same', field: 'id', reason: 'duplicates the id of rules[0]' },
    ]);
  });

  it('rejects documents that are not a rule set', () => {
    expect(issuesOf(null)).toMatchObject([{ index: null, field: 'rules' }]);
    expect(issuesOf([])).toMatchObject([{ index: null, field: 'rules' }]);
    expect(issuesOf({ rules: {} })).toMatchObject([{ field: 'rules', reason: 'must be an array' }]);
    expect(issuesOf({ rules: [42] })).toMatchObject([{ index: 0, reason: 'must be an object' }]);
  });

  it.each([
    [{ id: 'bad id!', type: 'asn', action: 'block', asns: [1] }, 'id'],
    [{ id: 'a', type: 'firewall' }, 'type'],
    [{ id: 'a', type: 'ip', action: 'block', ranges: [] }, 'ranges'],
    [{ id: 'a', type: 'ip', action: 'block', ranges: ['fe80::1%eth0'] }, 'ranges[0]'],
    [{ id: 'a', type: 'country', action: 'block', countries: ['Germany'] }, 'countries[0]'],
    [{ id: 'a', type: 'asn', action: 'block', asns: [4294967296] }, 'asns[0]'],
    [{ id: 'a', type: 'asn', action: 'block', asns: [1], mode: 'dry-run' }, 'mode'],
    [{ id: 'a', type: 'asn', action: 'block', asns: [1], expiresAt: 'tomorrow' }, 'expiresAt'],
    [{ id: 'a', type: 'pattern', action: 'block', when: [] }, 'when'],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'body', match: 'exact', value: 'x' }],
      },
      'when[0].field',
    ],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'glob', value: 'x' }],
      },
      'when[0].match',
    ],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'exact', value: '' }],
      },
      'when[0].value',
    ],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'header', match: 'exact', value: 'x' }],
      },
      'when[0].name',
    ],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', name: 'x', match: 'exact', value: 'x' }],
      },
      'when[0].name',
    ],
    [
      {
        id: 'a',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'exact', value: 'x', flags: 'i' }],
      },
      'when[0].flags',
    ],
    [
      { id: 'a', type: 'rate_limit', key: { kind: 'ip' }, windowSeconds: 0, limit: 1 },
      'windowSeconds',
    ],
    [{ id: 'a', type: 'rate_limit', key: { kind: 'ip' }, windowSeconds: 1, limit: 1.5 }, 'limit'],
    [
      { id: 'a', type: 'rate_limit', key: { kind: 'cookie' }, windowSeconds: 1, limit: 1 },
      'key.kind',
    ],
    [
      {
        id: 'a',
        type: 'rate_limit',
        key: { kind: 'ip' },
        windowSeconds: 1,
        limit: 1,
        methods: ['GET /'],
      },
      'methods[0]',
    ],
    [
      {
        id: 'a',
        type: 'rate_limit',
        key: { kind: 'ip' },
        windowSeconds: 1,
        limit: 1,
        ranges: ['10.0.0.0/33'],
      },
      'ranges[0]',
    ],
    [
      { id: 'a', type: 'rate_limit', key: { kind: 'ip' }, windowSeconds: 1, limit: 1, ranges: [] },
      'ranges',
    ],
  ])('rejects %j at field %s', (rule, field) => {
    expect(one(rule).map((i) => i.field)).toContain(field);
  });
});

describe('regex patterns', () => {
  afterEach(() => registerRegexEngine(sregexEngine));
  const rule = {
    id: 'r',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'regex', value: '^/a+$' }],
  };

  it('are compiled by the built-in linear-time engine by default', () => {
    expect(parseRuleSet({ rules: [rule] }).rules).toHaveLength(1);
    const lookahead = { ...rule, when: [{ field: 'path', match: 'regex', value: 'a(?=b)' }] };
    expect(one(lookahead)).toMatchObject([
      { field: 'when[0].value', reason: expect.stringContaining('lookahead') },
    ]);
  });

  it('are rejected while no linear-time engine is registered', () => {
    registerRegexEngine(undefined);
    expect(one(rule)).toMatchObject([
      { field: 'when[0].match', reason: expect.stringContaining('regex engine') },
    ]);
  });

  it('are compiled by the registered engine, whose errors name the pattern', () => {
    registerRegexEngine({
      compile(pattern) {
        if (pattern.includes('(')) throw new Error('unsupported group at 0');
        return { test: (s) => s.startsWith('/a') };
      },
    });
    expect(parseRuleSet({ rules: [rule] }).rules).toHaveLength(1);
    const bad = { ...rule, when: [{ field: 'path', match: 'regex', value: '(x' }] };
    expect(one(bad)).toMatchObject([
      { field: 'when[0].value', reason: 'invalid regex: unsupported group at 0' },
    ]);
  });
});
