import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitRule, Rule } from '../rules/model.js';
import { parseRuleSet } from '../rules/validate.js';
import type { Snapshot } from '../snapshot/reader.js';
import { openFixture, temporaryDirectory } from '../test-support/snapshot-fixture.js';
import type { Decision, RateLimitInfo, RuleMatch } from './decision.js';
import { Evaluator, MAX_RATE_LIMIT_KEY } from './evaluator.js';
import { compileConditions, meetsAll } from './pattern-matcher.js';
import { type RateLimiter, type RateLimitSeries, SlidingWindowLimiter } from './rate-limiter.js';
import { type RequestInfo, RequestView } from './request.js';

const tmp = temporaryDirectory();
afterAll(() => tmp.remove());

function request(overrides: Partial<RequestInfo> = {}): RequestInfo {
  return {
    ip: '192.0.2.10',
    method: 'GET',
    host: 'shop.example',
    path: '/',
    query: '',
    userAgent: 'Mozilla/5.0',
    headers: {},
    ...overrides,
  };
}

async function evaluatorFor(
  rules: unknown[],
  extra: Omit<Parameters<typeof openFixture>[1], 'rules'> = {},
) {
  const snapshot = await openFixture(tmp.dir, { rules, ...extra });
  return { evaluator: new Evaluator(snapshot), snapshot };
}

describe('decision precedence', () => {
  let snapshot: Snapshot;
  let evaluator: Evaluator;
  beforeAll(async () => {
    ({ evaluator, snapshot } = await evaluatorFor(
      [
        { id: 'geo-block', type: 'country', action: 'block', countries: ['XA'] },
        { id: 'office', type: 'ip', action: 'allow', ranges: ['203.0.113.0/24'] },
        {
          id: 'trial-block',
          type: 'ip',
          action: 'block',
          mode: 'monitor',
          ranges: ['198.51.100.0/25', '192.0.2.0/24'],
        },
        { id: 'bad-range', type: 'ip', action: 'block', ranges: ['198.51.100.0/24'] },
        {
          id: 'admin',
          type: 'pattern',
          action: 'block',
          when: [{ field: 'path', match: 'prefix', value: '/admin' }],
        },
        {
          id: 'health',
          type: 'pattern',
          action: 'allow',
          when: [{ field: 'path', match: 'exact', value: '/healthz' }],
        },
      ],
      {
        country: [
          ['203.0.113.0/24', 'XA'],
          ['198.51.100.0/24', 'XA'],
        ],
      },
    ));
  });
  afterAll(() => snapshot.close());

  it('lets an allow rule beat a block rule of another type', () => {
    const d = evaluator.evaluate(request({ ip: '203.0.113.7' }));
    expect(d).toMatchObject({ action: 'allow', ruleId: 'office', category: 'ip', mode: 'enforce' });
  });

  it('lets an allow pattern beat a block from a range category', () => {
    const d = evaluator.evaluate(request({ ip: '198.51.100.200', path: '/healthz' }));
    expect(d).toMatchObject({ action: 'allow', ruleId: 'health', category: 'pattern' });
  });

  it('tries range categories in the order ip, country, asn, reputation within a stage', () => {
    const d = evaluator.evaluate(request({ ip: '198.51.100.200' }));
    expect(d).toMatchObject({ action: 'block', ruleId: 'bad-range', category: 'ip' });
  });

  it('keeps an earlier monitor match beside the enforce rule that decides', () => {
    const d = evaluator.evaluate(request({ ip: '198.51.100.5' }));
    expect(d.ruleId).toBe('bad-range');
    expect(d.monitored).toEqual({ action: 'block', ruleId: 'trial-block', category: 'ip' });
  });

  it('decides with mode monitor when only a monitor rule matches', () => {
    const d = evaluator.evaluate(request({ ip: '192.0.2.77' }));
    expect(d).toMatchObject({
      action: 'block',
      mode: 'monitor',
      ruleId: 'trial-block',
      monitored: null,
    });
  });

  it('lets an enforce pattern block win over a monitor ip block', () => {
    const d = evaluator.evaluate(request({ ip: '192.0.2.77', path: '/admin/users' }));
    expect(d).toMatchObject({
      action: 'block',
      mode: 'enforce',
      ruleId: 'admin',
      category: 'pattern',
    });
    expect(d.monitored?.ruleId).toBe('trial-block');
  });

  it('passes when nothing matches, naming the snapshot version', () => {
    const d = evaluator.evaluate(request({ ip: '100.64.0.1' }));
    expect(d).toEqual({
      action: 'pass',
      mode: 'enforce',
      ruleId: null,
      category: null,
      snapshotVersion: 7,
      monitored: null,
      rateLimit: null,
    });
  });

  it('ignores range rules for an address that does not parse, but still applies patterns', () => {
    expect(evaluator.evaluate(request({ ip: 'not-an-ip' })).action).toBe('pass');
    expect(evaluator.evaluate(request({ ip: 'not-an-ip', path: '/admin' })).ruleId).toBe('admin');
  });
});

describe('expiry', () => {
  it('skips a rule once its expiresAt has passed', async () => {
    const { evaluator, snapshot } = await evaluatorFor([
      {
        id: 'temp',
        type: 'ip',
        action: 'block',
        ranges: ['192.0.2.10'],
        expiresAt: '2030-01-01T00:00:00Z',
      },
    ]);
    expect(evaluator.evaluate(request(), Date.parse('2029-12-31T23:59:59Z')).action).toBe('block');
    expect(evaluator.evaluate(request(), Date.parse('2030-01-01T00:00:00Z')).action).toBe('pass');
    snapshot.close();
  });
});

describe('IP matching (WAF-SPEC defects 1-4)', () => {
  let snapshot: Snapshot;
  let evaluator: Evaluator;
  beforeAll(async () => {
    ({ evaluator, snapshot } = await evaluatorFor([
      { id: 'wide', type: 'ip', action: 'block', ranges: ['10.0.0.0/8'] },
      { id: 'narrow', type: 'ip', action: 'block', ranges: ['10.1.0.0/16'] },
      { id: 'single', type: 'ip', action: 'block', ranges: ['1.2.3.5/32'] },
      { id: 'v6', type: 'ip', action: 'block', ranges: ['2600:1f18:3d00::1'] },
      { id: 'first', type: 'ip', action: 'block', ranges: ['172.16.5.0-172.16.5.9'] },
    ]));
  });
  afterAll(() => snapshot.close());

  const verdict = (ip: string) => evaluator.evaluate(request({ ip })).ruleId;

  it('matches the first and last address of a range and a /32 (defect 1)', () => {
    expect(verdict('172.16.5.0')).toBe('first');
    expect(verdict('172.16.5.9')).toBe('first');
    expect(verdict('172.16.5.10')).toBeNull();
    expect(verdict('1.2.3.5')).toBe('single');
  });

  it('finds the outer range next to a nested one (defect 2)', () => {
    expect(verdict('10.0.0.5')).toBe('wide');
    expect(verdict('10.255.255.255')).toBe('wide');
    expect(verdict('10.1.2.3')).toBe('wide'); // both match; rule-set order decides
  });

  it('does not confuse IPv4-compatible IPv6 with IPv4 (defect 3)', () => {
    expect(verdict('::102:305')).toBeNull();
    expect(verdict('::1.2.3.5')).toBeNull();
    expect(verdict('::ffff:1.2.3.5')).toBe('single');
    expect(verdict('::ffff:102:305')).toBe('single');
  });

  it('compares IPv6 as numbers, not strings (defect 4)', () => {
    expect(verdict('2600:1F18:3D00:0000:0000:0000:0000:0001')).toBe('v6');
    expect(verdict('2600:1f18:3d00::0:1')).toBe('v6');
    expect(verdict('2600:1f18:3d00::2')).toBeNull();
  });
});

describe('allow and block patterns, matched in one pass', () => {
  const rules = [
    {
      id: 'b1',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/x' }],
    },
    {
      id: 'a1',
      type: 'pattern',
      action: 'allow',
      mode: 'monitor',
      when: [{ field: 'user_agent', match: 'contains', value: 'friend' }],
    },
    {
      id: 'a2',
      type: 'pattern',
      action: 'allow',
      when: [{ field: 'user_agent', match: 'contains', value: 'friendly' }],
    },
    {
      id: 'b2',
      type: 'pattern',
      action: 'block',
      mode: 'monitor',
      when: [{ field: 'path', match: 'prefix', value: '/x/y' }],
    },
  ];

  it.each([[0], [1024]])('keeps the stages apart (field memo %i)', async (fieldMemo) => {
    const snapshot = await openFixture(tmp.dir, { rules });
    const evaluator = new Evaluator(snapshot, { fieldMemo });
    const v = (path: string, userAgent: string) =>
      evaluator.evaluate(request({ ip: '100.64.0.1', path, userAgent }));
    for (let round = 0; round < 2; round++) {
      // A later allow beats an earlier block; the monitor allow before it is kept.
      expect(v('/x', 'a friendly bot')).toMatchObject({
        action: 'allow',
        ruleId: 'a2',
        monitored: { ruleId: 'a1' },
      });
      // Only a monitor allow: the block stage decides, the allow is reported beside it.
      expect(v('/x/y', 'friend')).toMatchObject({
        action: 'block',
        ruleId: 'b1',
        mode: 'enforce',
        monitored: { ruleId: 'a1', action: 'allow' },
      });
      expect(v('/x/y', 'curl')).toMatchObject({ action: 'block', ruleId: 'b1', monitored: null });
      expect(v('/q', 'friend')).toMatchObject({ action: 'allow', mode: 'monitor', ruleId: 'a1' });
      expect(v('/q', 'curl').action).toBe('pass');
    }
    snapshot.close();
  });
});

describe('the memo of recent addresses', () => {
  it('gives the same decisions as fresh lookups, however often addresses repeat', async () => {
    const rules = [
      { id: 'wide', type: 'ip', action: 'block', ranges: ['10.0.0.0/8', '2001:db8::/32'] },
      { id: 'office', type: 'ip', action: 'allow', ranges: ['10.9.0.0/16'] },
      { id: 'geo', type: 'country', action: 'block', countries: ['XA'], mode: 'monitor' },
      { id: 'login', type: 'rate_limit', key: { kind: 'ip' }, windowSeconds: 60, limit: 1000 },
    ];
    const extra = {
      country: [
        ['10.9.8.0/24', 'XA'] as [string, string],
        ['2001:db8:1::/48', 'XA'] as [string, string],
      ],
    };
    const snapshot = await openFixture(tmp.dir, { rules, ...extra });
    const memo = new Evaluator(snapshot, { addressMemo: 4 });
    const fresh = new Evaluator(snapshot, { addressMemo: 0 });
    await fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            '10.1.2.3',
            '10.9.8.7',
            '10.9.1.1',
            '192.0.2.1',
            '2001:db8::1',
            '2001:DB8:1::5',
            '::ffff:10.9.8.7',
            'not an address',
            '',
          ),
          { maxLength: 40 },
        ),
        (ips) => {
          for (const ip of ips)
            expect(memo.evaluate(request({ ip }), 0)).toEqual(fresh.evaluate(request({ ip }), 0));
        },
      ),
    );
    snapshot.close();
  });
});

describe('datasets', () => {
  it('blocks by country, ASN and reputation list', async () => {
    const { evaluator, snapshot } = await evaluatorFor(
      [
        { id: 'geo', type: 'country', action: 'block', countries: ['xb'] },
        { id: 'hoster', type: 'asn', action: 'block', asns: [64500] },
        { id: 'drop', type: 'reputation', action: 'block', lists: ['drop'] },
      ],
      {
        country: [
          ['100.64.0.0/16', 'XB'],
          ['2001:db8::/32', 'XB'],
        ],
        asn: [['100.65.0.0/16', 64500, 'Example Hosting']],
        reputation: { drop: ['100.66.1.0/24'], other: ['100.67.0.0/16'] },
      },
    );
    const v = (ip: string) => evaluator.evaluate(request({ ip }));
    expect(v('100.64.1.1')).toMatchObject({ ruleId: 'geo', category: 'country' });
    expect(v('2001:db8::1')).toMatchObject({ ruleId: 'geo', category: 'country' });
    expect(v('100.65.0.1')).toMatchObject({ ruleId: 'hoster', category: 'asn' });
    expect(v('100.66.1.255')).toMatchObject({ ruleId: 'drop', category: 'reputation' });
    expect(v('100.67.0.1').action).toBe('pass');
    snapshot.close();
  });

  it('resolves a label set once and answers the same from then on', async () => {
    const snapshot = await openFixture(tmp.dir, {
      rules: [{ id: 'hoster', type: 'asn', action: 'block', asns: [64500] }],
      asn: [
        ['100.65.0.0/16', 64500, 'Example Hosting'],
        ['100.68.0.0/16', 64501, 'Another Network'],
      ],
    });
    // No address memo: every evaluation looks the address up and reads the set's slot.
    const evaluator = new Evaluator(snapshot, { addressMemo: 0 });
    for (let round = 0; round < 3; round++) {
      expect(evaluator.evaluate(request({ ip: '100.65.0.1' }))).toMatchObject({ ruleId: 'hoster' });
      expect(evaluator.evaluate(request({ ip: '100.65.9.9' }))).toMatchObject({ ruleId: 'hoster' });
      expect(evaluator.evaluate(request({ ip: '100.68.0.1' })).action).toBe('pass'); // a set no rule names
      expect(evaluator.evaluate(request({ ip: '100.69.0.1' })).action).toBe('pass'); // no set
    }
    snapshot.close();
  });
});

describe('patterns', () => {
  let snapshot: Snapshot;
  let evaluator: Evaluator;
  beforeAll(async () => {
    ({ evaluator, snapshot } = await evaluatorFor([
      {
        id: 'wp',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
      },
      {
        id: 'bot',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'user_agent', match: 'contains', value: 'SQLMap' }],
      },
      {
        id: 'hdr',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'header', name: 'X-Debug', match: 'exact', value: 'on' }],
      },
      {
        id: 'param',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'query', name: 'q', match: 'contains', value: 'union select' }],
      },
      {
        id: 'host',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'host', match: 'exact', value: 'Internal.Example' }],
      },
      {
        id: 'and',
        type: 'pattern',
        action: 'block',
        when: [
          { field: 'method', match: 'exact', value: 'delete' },
          { field: 'path', match: 'prefix', value: '/api/' },
        ],
      },
    ]));
  });
  afterAll(() => snapshot.close());

  const id = (r: Partial<RequestInfo>) => evaluator.evaluate(request(r)).ruleId;

  it('matches paths after decoding and resolving dot segments', () => {
    expect(id({ path: '/wp-admin/x' })).toBe('wp');
    expect(id({ path: '/wp%2Dadmin' })).toBe('wp');
    expect(id({ path: '//wp-admin' })).toBe('wp');
    expect(id({ path: '/static/../wp-admin' })).toBe('wp');
    expect(id({ path: '/WP-ADMIN' })).toBeNull(); // prefix is case-sensitive
  });

  it('matches contains case-insensitively', () => {
    expect(id({ userAgent: 'sqlmap/1.7' })).toBe('bot');
    expect(id({ query: 'q=UNION+SELECT+1' })).toBe('param');
    expect(id({ query: 'other=union%20select' })).toBeNull();
  });

  it('matches headers by lower-case name, hosts without port and case, methods upper-cased', () => {
    expect(id({ headers: { 'x-debug': 'on' } })).toBe('hdr');
    expect(id({ headers: { 'x-debug': 'ON' } })).toBeNull();
    expect(id({ host: 'internal.example:8443' })).toBe('host');
    expect(id({ method: 'delete', path: '/api/items/1' })).toBe('and');
    expect(id({ method: 'DELETE', path: '/web/items/1' })).toBeNull();
  });
});

describe('regex patterns', () => {
  it('match with the linear-time engine, case-folded on request', async () => {
    const { evaluator, snapshot } = await evaluatorFor([
      {
        id: 'ids',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'path', match: 'regex', value: '^/admin/\\d+$' }],
      },
      {
        id: 'ua',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'user_agent', match: 'regex', value: 'curl|wget', flags: 'i' }],
      },
      {
        id: 'evil',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'query', match: 'regex', value: '(a+)+b' }],
      },
    ]);
    const id = (r: Partial<RequestInfo>) => evaluator.evaluate(request(r)).ruleId;
    expect(id({ path: '/admin/42' })).toBe('ids');
    expect(id({ path: '/admin/42/edit' })).toBeNull();
    expect(id({ userAgent: 'Wget/1.21' })).toBe('ua');
    // A classic catastrophic-backtracking input answers at once.
    expect(id({ query: 'a'.repeat(100_000) })).toBeNull();
    expect(id({ query: `${'a'.repeat(1000)}b` })).toBe('evil');
    snapshot.close();
  });
});

describe('rate limits', () => {
  it('counts matching requests per key and answers rate_limit beyond the limit', async () => {
    const { evaluator, snapshot } = await evaluatorFor([
      {
        id: 'login',
        type: 'rate_limit',
        when: [{ field: 'path', match: 'exact', value: '/login' }],
        methods: ['POST'],
        key: { kind: 'ip' },
        windowSeconds: 60,
        limit: 2,
      },
    ]);
    const now = Date.parse('2026-01-01T00:00:10Z');
    const login = request({ method: 'POST', path: '/login' });
    const first = evaluator.evaluate(login, now);
    expect(first.action).toBe('pass');
    expect(first.rateLimit).toMatchObject({
      ruleId: 'login',
      limit: 2,
      remaining: 1,
      resetSeconds: 50,
    });
    expect(evaluator.evaluate(login, now).action).toBe('pass');
    const third = evaluator.evaluate(login, now);
    expect(third).toMatchObject({ action: 'rate_limit', ruleId: 'login', category: 'rate_limit' });
    expect(third.rateLimit).toMatchObject({ remaining: 0, windowSeconds: 60 });
    // Another client has its own counter; a GET does not count.
    expect(evaluator.evaluate({ ...login, ip: '192.0.2.11' }, now).action).toBe('pass');
    expect(evaluator.evaluate({ ...login, method: 'GET' }, now).rateLimit).toBeNull();
    snapshot.close();
  });

  it('counts only the addresses a rule names in ranges, when it names any', async () => {
    const { evaluator, snapshot } = await evaluatorFor([
      {
        id: 'one-attacker',
        type: 'rate_limit',
        key: { kind: 'ip' },
        windowSeconds: 60,
        limit: 1,
        ranges: ['203.0.113.0/28', '2001:db8::1'],
      },
    ]);
    const now = Date.parse('2026-01-01T00:00:10Z');
    for (const ip of ['203.0.113.15', '2001:db8::1']) {
      expect(evaluator.evaluate(request({ ip }), now).action).toBe('pass');
      expect(evaluator.evaluate(request({ ip }), now).action).toBe('rate_limit');
    }
    for (const ip of ['203.0.113.16', '2001:db8::2', 'not-an-address'])
      for (let i = 0; i < 3; i++) {
        const decision = evaluator.evaluate(request({ ip }), now);
        expect(decision.action).toBe('pass');
        expect(decision.rateLimit).toBeNull(); // not counted at all
      }
    snapshot.close();
  });

  it('counts long header and path keys apart and together as they are, storing them bounded', async () => {
    const snapshot = await openFixture(tmp.dir, {
      rules: [
        {
          id: 'per-key',
          type: 'rate_limit',
          key: { kind: 'header', name: 'x-api-key' },
          windowSeconds: 60,
          limit: 2,
        },
        {
          id: 'per-page',
          type: 'rate_limit',
          key: { kind: 'ip_path' },
          windowSeconds: 60,
          limit: 2,
        },
      ],
    });
    const keys: string[] = [];
    const inner = new SlidingWindowLimiter();
    const recording: RateLimiter = {
      series: (ruleId, windowMs) => {
        const series = inner.series(ruleId, windowMs);
        return {
          hit: (key, limit, now) => {
            keys.push(key);
            return series.hit(key, limit, now);
          },
        };
      },
    };
    const evaluator = new Evaluator(snapshot, { rateLimiter: recording });
    const long = (c: string) => c.repeat(10_000);
    const call = (key: string, path: string) =>
      evaluator.evaluate(request({ headers: { 'x-api-key': key }, path }), 1_000);
    // the same long key is one counter; keys differing only far in are two
    expect(call(long('a'), '/a').action).toBe('pass');
    expect(call(long('a'), '/b').action).toBe('pass');
    expect(call(long('a'), '/c')).toMatchObject({ action: 'rate_limit', ruleId: 'per-key' });
    expect(call(`${long('a')}b`, '/d').action).toBe('pass');
    // a long path: the same one twice more is limited, per address
    const path = `/${long('p')}`;
    expect(call('k1', path).action).toBe('pass');
    expect(call('k2', path).action).toBe('pass');
    expect(call('k3', path)).toMatchObject({ action: 'rate_limit', ruleId: 'per-page' });
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThanOrEqual(MAX_RATE_LIMIT_KEY);
    snapshot.close();
  });

  it('reports a monitor-mode rate limit without enforcing it', async () => {
    const { evaluator, snapshot } = await evaluatorFor([
      {
        id: 'all',
        type: 'rate_limit',
        mode: 'monitor',
        key: { kind: 'ip' },
        windowSeconds: 10,
        limit: 1,
      },
    ]);
    evaluator.evaluate(request(), 1_000);
    const d = evaluator.evaluate(request(), 1_000);
    expect(d).toMatchObject({ action: 'rate_limit', mode: 'monitor', ruleId: 'all' });
    expect(d.rateLimit?.remaining).toBe(0);
    snapshot.close();
  });
});

/**
 * The precedence of the module comment read directly: every pattern and rate-limit rule tested
 * in rule-set order with `meetsAll`, no index, no memo, no skipped stage. Counting uses a limiter
 * of its own, so the evaluator and this reading agree only if they count the same rules.
 */
function referenceDecision(
  rules: readonly Rule[],
  series: (rule: RateLimitRule) => RateLimitSeries,
  info: RequestInfo,
  now: number,
  snapshotVersion: number,
): Decision {
  const view = new RequestView(info);
  const decision = (
    action: Decision['action'],
    mode: Decision['mode'],
    match: RuleMatch | null,
    monitored: RuleMatch | null,
    rateLimit: RateLimitInfo | null,
  ): Decision => ({
    action,
    mode,
    ruleId: match?.ruleId ?? null,
    category: match?.category ?? null,
    snapshotVersion,
    monitored: mode === 'monitor' ? null : monitored,
    rateLimit,
  });
  let monitored: RuleMatch | null = null;
  for (const action of ['allow', 'block'] as const) {
    for (const rule of rules) {
      if (rule.type !== 'pattern' || rule.action !== action) continue;
      if (!meetsAll(compileConditions(rule.when), view)) continue;
      const match: RuleMatch = { action, ruleId: rule.id, category: 'pattern' };
      if (rule.mode === 'enforce') return decision(action, 'enforce', match, monitored, null);
      monitored ??= match;
    }
  }
  let counted: RateLimitInfo | null = null;
  let monitoredLimit: RateLimitInfo | null = null;
  for (const rule of rules) {
    if (rule.type !== 'rate_limit') continue;
    if (rule.methods?.length && !rule.methods.includes(info.method)) continue;
    if (!meetsAll(compileConditions(rule.when), view)) continue;
    const state = series(rule).hit(info.ip, rule.limit, now);
    const limit: RateLimitInfo = {
      ruleId: rule.id,
      limit: rule.limit,
      remaining: state.remaining,
      windowSeconds: rule.windowSeconds,
      resetSeconds: Math.max(1, Math.ceil(state.resetMs / 1000)),
    };
    if (!state.limited) {
      counted ??= limit;
      continue;
    }
    const match: RuleMatch = { action: 'rate_limit', ruleId: rule.id, category: 'rate_limit' };
    if (rule.mode === 'enforce') return decision('rate_limit', 'enforce', match, monitored, limit);
    monitored ??= match;
    monitoredLimit ??= limit;
  }
  if (monitored)
    return decision(monitored.action, 'monitor', monitored, null, monitoredLimit ?? counted);
  return decision('pass', 'enforce', null, null, counted);
}

describe('pattern rules and rate limits together', () => {
  const condition = fc.constantFrom(
    { field: 'path', match: 'prefix', value: '/a' },
    { field: 'path', match: 'exact', value: '/a/b' },
    { field: 'path', match: 'contains', value: 'x' },
    { field: 'method', match: 'exact', value: 'POST' },
    { field: 'user_agent', match: 'contains', value: 'bot' },
    { field: 'header', name: 'x-k', match: 'exact', value: 'v' },
    { field: 'query', name: 'q', match: 'prefix', value: '1' },
  );
  const mode = fc.constantFrom('enforce', 'monitor');
  const pattern = fc.record({
    type: fc.constant('pattern'),
    action: fc.constantFrom('allow', 'block'),
    mode,
    when: fc.array(condition, { minLength: 1, maxLength: 2 }),
  });
  const rateLimit = fc.record({
    type: fc.constant('rate_limit'),
    mode,
    when: fc.array(condition, { maxLength: 2 }),
    methods: fc.option(fc.constantFrom(['POST'], ['GET', 'POST']), { nil: undefined }),
    key: fc.constant({ kind: 'ip' }),
    windowSeconds: fc.constant(60),
    limit: fc.integer({ min: 1, max: 3 }),
  });
  const requestInfo = fc.record({
    ip: fc.constantFrom('192.0.2.1', '192.0.2.2'),
    method: fc.constantFrom('GET', 'POST'),
    path: fc.constantFrom('/', '/a', '/a/b', '/ax', '/b/x'),
    query: fc.constantFrom('', 'q=1', 'q=2'),
    userAgent: fc.constantFrom('Mozilla/5.0', 'a Bot'),
    headers: fc.constantFrom({}, { 'x-k': 'v' }),
  });

  // One snapshot file without rules; each drawn rule set, validated as the writer does, is
  // evaluated over its (empty) range tables. Writing a file per rule set would make each run
  // slower by a write and an integrity check, for no difference to what is compared.
  let base: Snapshot;
  beforeAll(async () => {
    base = await openFixture(tmp.dir, { rules: [] });
  });
  afterAll(() => base.close());

  it('decide and count as the precedence reads, request after request', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(pattern, rateLimit), { minLength: 1, maxLength: 6 }),
        fc.array(requestInfo, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0, 1024),
        (drawn, requests, fieldMemo) => {
          const { rules } = parseRuleSet({
            rules: drawn.map((rule, i) => ({ id: `r${i}`, ...rule })),
          });
          const evaluator = new Evaluator({ ...base, rules }, { fieldMemo });
          const limiter = new SlidingWindowLimiter();
          const series = (rule: RateLimitRule) =>
            limiter.series(rule.id, rule.windowSeconds * 1000);
          const now = Date.parse('2026-01-01T00:00:30Z');
          for (const info of requests) {
            const full = { ...info, host: 'shop.example' };
            expect(evaluator.evaluate(full, now)).toEqual(
              referenceDecision(rules, series, full, now, base.version),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
