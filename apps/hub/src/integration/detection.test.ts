/**
 * Detection against the real hub, Redis and each database: every detector fires on the reports
 * that should fire it and publishes an automatic rule with an expiry and its evidence, built into
 * the site's next snapshot; allow rules keep detectors off what they cover; blocks expire and are
 * revocable; a key over a rate-limit rule's fleet-wide budget, summed over instances, is blocked;
 * settings are validated whole.
 */
import { randomUUID } from 'node:crypto';
import type { Rule } from '@rampart/rules-core/rules/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomaticBlockView } from '../detection/automatic-blocks.service.js';
import { DEFAULT_DETECTION_SETTINGS } from '../detection/detection-settings.js';
import { waitFor } from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';
import {
  loginSignal,
  postReport,
  reportBatch,
  snapshotRules,
} from '../test-support/report-batches.js';

afterAll(() => stopPostgres());

const iso = (ms = Date.now()) => new Date(ms).toISOString();
const signal = loginSignal;
const batch = reportBatch;

function event(ip: string, userAgent: string) {
  return {
    requestId: randomUUID(),
    time: iso(),
    ip,
    method: 'GET',
    host: 'shop.example',
    path: '/',
    userAgent,
    action: 'pass',
    mode: 'enforce',
    outcome: 'passed',
    ruleId: null,
    category: null,
    monitoredRuleId: null,
    snapshotVersion: 1,
    sampled: true,
  };
}

/** An account's HMAC, as a client would send it (any 64 hex digits do for the hub). */
const account = (name: string) => Buffer.from(name.padEnd(32, '.')).toString('hex').slice(0, 64);

describe.each(DATABASE_KINDS)('detection on %s', (kind) => {
  let stack: HubStack;
  const c = () => stack.client;
  const keys = new Map<string, string>();

  const post = async (siteId: string, body: unknown) => {
    const answer = await postReport(stack.hub.url, keys.get(siteId) ?? '', body);
    expect(answer.status, await answer.text()).toBe(202);
  };

  const blocks = async (siteId: string, status = '') =>
    (
      await c().admin<AutomaticBlockView[]>(
        'GET',
        `/v1/sites/${siteId}/automatic-blocks${status ? `?status=${status}` : ''}`,
      )
    ).body;

  const blockBy = (siteId: string, detector: string, status = 'active') =>
    waitFor(`a ${status} block by ${detector}`, async () =>
      (await blocks(siteId, status)).find((b) => b.detector === detector),
    );

  /** The rules of the site's current snapshot, as its clients run them. */
  const snapshotRulesOf = (siteId: string) => snapshotRules(c(), keys.get(siteId) ?? '');

  const snapshotHas = (siteId: string, ruleId: string, present = true) =>
    waitFor(`${ruleId} ${present ? 'in' : 'out of'} the snapshot of ${siteId}`, async () =>
      (await snapshotRulesOf(siteId)).some((r) => r.id === ruleId) === present ? true : undefined,
    );

  /** A site of its own per test, with `settings` over the defaults and `rules`. */
  const site = async (
    id: string,
    settings: Record<string, unknown> = {},
    rules: unknown[] = [],
  ) => {
    const { key } = await c().createSite(id, id);
    keys.set(id, key);
    if (Object.keys(settings).length > 0) {
      const put = await c().admin('PUT', `/v1/sites/${id}/detection`, settings);
      expect(put.status, put.text).toBe(200);
    }
    // A site is first built when it gets rules; every site here has at least this one.
    const wp = {
      id: 'wp',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    };
    const imported = await c().admin('POST', `/v1/sites/${id}/rules/import`, {
      rules: [wp, ...rules],
    });
    expect(imported.status, imported.text).toBe(200);
    await c().waitForVersion(id, 1);
    return id;
  };

  beforeAll(async () => {
    stack = await startStack(kind);
    // Labels for the network detectors: 203.0.113.0/24 is AS64501 in NL.
    for (const [dataset, csv] of [
      ['asn/nets', '203.0.113.0,203.0.113.255,64501,"Attack Hosting"\n'],
      ['country/geo', '203.0.113.0,203.0.113.255,NL\n'],
    ] as const) {
      const upload = await c().admin('PUT', `/v1/datasets/${dataset}`, undefined, {
        raw: csv,
        headers: { 'content-type': 'text/csv' },
      });
      expect(upload.status, upload.text).toBeLessThan(300);
    }
  });
  afterAll(() => stack?.stop());

  describe('settings', () => {
    it('start at the defaults and take any subset, validated whole', async () => {
      await site('settings');
      const initial = await c().admin('GET', '/v1/sites/settings/detection');
      expect(initial.body).toEqual(DEFAULT_DETECTION_SETTINGS);
      const put = await c().admin('PUT', '/v1/sites/settings/detection', {
        failedLoginsPerIp: { threshold: 8, mode: 'monitor' },
      });
      expect(put.status, put.text).toBe(200);
      expect(put.body).toMatchObject({
        failedLoginsPerIp: {
          ...DEFAULT_DETECTION_SETTINGS.failedLoginsPerIp,
          threshold: 8,
          mode: 'monitor',
        },
        requestRateIp: DEFAULT_DETECTION_SETTINGS.requestRateIp,
      });
      const bad = await c().admin<{ issues: { field: string; reason: string }[] }>(
        'PUT',
        '/v1/sites/settings/detection',
        {
          failedLoginsPerIp: { threshold: 0 },
          failedLoginShareAsn: { action: 'rate_limit', share: 2 },
          failedLoginsPerAcount: {},
        },
      );
      expect(bad.status).toBe(422);
      expect(bad.body.issues.map((i) => i.field).sort()).toEqual([
        'failedLoginShareAsn.action',
        'failedLoginShareAsn.share',
        'failedLoginsPerAcount',
        'failedLoginsPerIp.threshold',
      ]);
      // Nothing of the refused document was applied.
      expect((await c().admin('GET', '/v1/sites/settings/detection')).body).toEqual(put.body);
      expect((await c().admin('GET', '/v1/sites/nowhere/detection')).status).toBe(404);
    });
  });

  it('blocks an address after the failed logins per IP, with its evidence, in the next snapshot', async () => {
    const id = await site('per-ip');
    const version = (await c().getSite(id)).currentVersion ?? 0;
    const failures = Array.from({ length: 5 }, () => signal('192.0.2.50', 'login_failed', null));
    await post(id, batch({ signals: failures.slice(0, 3) }));
    await post(id, batch({ signals: failures.slice(3) }, 'web-2:1')); // another instance
    const block = await blockBy(id, 'failedLoginsPerIp');
    expect(block).toMatchObject({
      subject: { kind: 'ip', addresses: ['192.0.2.50'] },
      mode: 'enforce',
      action: 'block',
      status: 'active',
      evidence: { count: 5, threshold: 5, windowSeconds: 300 },
    });
    expect(block.evidence.sampleRequestIds).toEqual(
      expect.arrayContaining(failures.slice(3).map((f) => f.requestId)),
    );
    expect(Date.parse(block.expiresAt) - Date.parse(block.createdAt)).toBe(3600_000);
    await c().waitForVersion(id, version + 1);
    await snapshotHas(id, block.ruleId);
    const rule = (await snapshotRulesOf(id)).find((r) => r.id === block.ruleId);
    expect(rule).toMatchObject({
      type: 'ip',
      action: 'block',
      ranges: ['192.0.2.50'],
      mode: 'enforce',
    });
    expect(rule?.expiresAt).toBe(block.expiresAt);
    // Further failures while the block stands publish nothing new.
    await post(id, batch({ signals: [signal('192.0.2.50', 'login_failed', null)] }));
    await new Promise((r) => setTimeout(r, 500));
    expect((await blocks(id)).filter((b) => b.detector === 'failedLoginsPerIp')).toHaveLength(1);
    const one = await c().admin('GET', `/v1/sites/${id}/automatic-blocks/${block.id}`);
    expect(one.body).toEqual(block);
    expect((await c().admin('GET', `/v1/sites/${id}/automatic-blocks/nope`)).status).toBe(404);
    const metrics = await c().admin<Record<string, number>>('GET', '/v1/metrics');
    expect(metrics.body.automaticBlocks).toBeGreaterThanOrEqual(1);
    expect(metrics.body.detectedBatches).toBeGreaterThanOrEqual(3);
    expect(metrics.body.detectionFailures).toBe(0);
  });

  it('does not fire below the threshold, nor count a retried batch twice', async () => {
    const id = await site('below');
    const once = batch({
      signals: Array.from({ length: 4 }, () => signal('192.0.2.51', 'login_failed', null)),
    });
    for (let i = 0; i < 3; i++) await post(id, once);
    await new Promise((r) => setTimeout(r, 800));
    expect(await blocks(id)).toEqual([]);
    await post(id, batch({ signals: [signal('192.0.2.51', 'login_failed', null)] }));
    await blockBy(id, 'failedLoginsPerIp'); // the fifth
  });

  it('blocks every address of a distributed attack on one account', async () => {
    const id = await site('per-account', { failedLoginsPerIp: { enabled: false } });
    const addresses = ['192.0.2.60', '192.0.2.61', '192.0.2.62'];
    const signals = Array.from({ length: 10 }, (_, i) =>
      signal(addresses[i % 3] as string, 'login_failed', account('victim')),
    );
    await post(id, batch({ signals }));
    const block = await blockBy(id, 'failedLoginsPerAccount');
    expect([...(block.subject as { addresses: readonly string[] }).addresses].sort()).toEqual(
      addresses,
    );
    expect(block.evidence).toMatchObject({ count: 10, addresses: 3, account: account('victim') });
    // Many failures on one account from a single address are the per-IP detector's business.
    const lone = await site('per-account-lone', { failedLoginsPerIp: { enabled: false } });
    await post(
      lone,
      batch({
        signals: Array.from({ length: 20 }, () =>
          signal('192.0.2.63', 'login_failed', account('x')),
        ),
      }),
    );
    await new Promise((r) => setTimeout(r, 800));
    expect(await blocks(lone)).toEqual([]);
  });

  describe('a surge of failed logins across the site', () => {
    /** Sites where only the surge detector runs. */
    const surgeSite = (id: string, surge: Record<string, unknown> = {}) =>
      site(id, {
        failedLoginsPerIp: { enabled: false },
        failedLoginsPerAccount: { enabled: false },
        failedLoginSurge: surge,
      });
    /** `per` failed logins from each of `n` addresses under `prefix`. */
    const spread = (prefix: string, n: number, per: number) =>
      Array.from({ length: n * per }, (_, i) =>
        signal(`${prefix}.${(i % n) + 1}`, 'login_failed', account(`user-${i}`)),
      );
    const detected = async () =>
      (await c().admin<Record<string, number>>('GET', '/v1/metrics')).body.detectedBatches ?? 0;
    /** Posts `body` and waits until the hub has run the detectors over it. */
    const postInspected = async (id: string, body: unknown) => {
      const before = await detected();
      await post(id, body);
      await waitFor('the batch inspected', async () =>
        (await detected()) > before ? true : undefined,
      );
    };

    it('blocks every address that failed repeatedly, none of them near the per-IP threshold', async () => {
      const id = await surgeSite('surge');
      const failures = spread('192.0.2', 6, 2); // 12 failures, 6 addresses, 2 each
      await post(id, batch({ signals: failures }));
      const block = await blockBy(id, 'failedLoginSurge');
      expect([...(block.subject as { addresses: readonly string[] }).addresses].sort()).toEqual([
        '192.0.2.1',
        '192.0.2.2',
        '192.0.2.3',
        '192.0.2.4',
        '192.0.2.5',
        '192.0.2.6',
      ]);
      expect(block).toMatchObject({
        mode: 'enforce',
        action: 'block',
        evidence: { count: 12, threshold: 10, windowSeconds: 60, addresses: 6 },
      });
      expect(block.evidence.baseline).toBeCloseTo((12 * 60) / 86_400, 2);
      expect(block.evidence.sampleRequestIds.length).toBeGreaterThan(0);
      expect(failures.map((f) => f.requestId)).toEqual(
        expect.arrayContaining([...block.evidence.sampleRequestIds]),
      );
      expect(Date.parse(block.expiresAt) - Date.parse(block.createdAt)).toBe(900_000);
      await snapshotHas(id, block.ruleId);
      // An address joining the surge later is blocked by a block of its own.
      await post(id, batch({ signals: spread('198.51.100', 1, 2) }));
      await waitFor('the late address blocked', async () =>
        (await blocks(id)).some((b) =>
          (b.subject as { addresses?: string[] }).addresses?.includes('198.51.100.1'),
        )
          ? true
          : undefined,
      );
    });

    it('leaves single failures, and too few failures or addresses, alone', async () => {
      const id = await surgeSite('surge-below');
      await postInspected(id, batch({ signals: spread('192.0.2', 12, 1) })); // a surge, 1 each
      const few = await surgeSite('surge-few');
      await postInspected(few, batch({ signals: spread('192.0.2', 4, 2) })); // 8 < 10
      const narrow = await surgeSite('surge-narrow');
      await postInspected(narrow, batch({ signals: spread('192.0.2', 4, 3) })); // 4 < 5 addresses
      await new Promise((r) => setTimeout(r, 500));
      for (const site of [id, few, narrow]) expect(await blocks(site)).toEqual([]);
    });

    it('measures a surge against the site’s usual rate of failed logins', async () => {
      const settings = { windowSeconds: 1, baselineSeconds: 60, factor: 20 };
      // A site that has seen 40 failed logins within the minute: 12 in a second is not 20 times
      // its usual rate (40 / 60 a second) ...
      const busy = await surgeSite('surge-busy', settings);
      await postInspected(busy, batch({ signals: spread('198.51.100', 40, 1) }));
      await new Promise((r) => setTimeout(r, 1200)); // out of the one-second window
      await postInspected(busy, batch({ signals: spread('192.0.2', 6, 2) }));
      // ... while on a quiet site it is.
      const quiet = await surgeSite('surge-quiet', settings);
      await post(quiet, batch({ signals: spread('192.0.2', 6, 2) }));
      const block = await blockBy(quiet, 'failedLoginSurge');
      expect(block.evidence).toMatchObject({ count: 12, baseline: 0.2 });
      expect(await blocks(busy)).toEqual([]);
    });
  });

  it('blocks an AS, and a country, whose logins mostly fail', async () => {
    const id = await site('share', {
      failedLoginsPerIp: { enabled: false },
      failedLoginsPerAccount: { enabled: false },
      failedLoginShareAsn: { mode: 'enforce', minAttempts: 20, share: 0.8 },
      failedLoginShareCountry: { mode: 'enforce', minAttempts: 20, share: 0.8 },
    });
    const signals = Array.from({ length: 20 }, (_, i) =>
      signal(`203.0.113.${i + 1}`, i < 17 ? 'login_failed' : 'login_succeeded', null),
    );
    // An address outside the dataset's ranges counts for neither.
    signals.push(signal('192.0.2.70', 'login_succeeded', null));
    await post(id, batch({ signals }));
    const asn = await blockBy(id, 'failedLoginShareAsn');
    expect(asn).toMatchObject({
      subject: { kind: 'asn', asn: 64501 },
      evidence: { count: 17, attempts: 20, share: 0.85, threshold: 20 },
    });
    const country = await blockBy(id, 'failedLoginShareCountry');
    expect(country.subject).toEqual({ kind: 'country', country: 'NL' });
    await snapshotHas(id, asn.ruleId);
    const rules = await snapshotRulesOf(id);
    expect(rules.find((r) => r.id === asn.ruleId)).toMatchObject({ type: 'asn', asns: [64501] });
    expect(rules.find((r) => r.id === country.ruleId)).toMatchObject({
      type: 'country',
      countries: ['NL'],
    });
  });

  it('leaves an AS alone while most of its logins succeed', async () => {
    const id = await site('share-ok', {
      failedLoginShareAsn: { mode: 'enforce', minAttempts: 20, share: 0.8 },
    });
    const signals = Array.from({ length: 40 }, (_, i) =>
      signal(`203.0.113.${i + 1}`, i % 4 === 0 ? 'login_failed' : 'login_succeeded', null),
    );
    await post(id, batch({ signals }));
    await new Promise((r) => setTimeout(r, 800));
    expect(await blocks(id)).toEqual([]);
  });

  it('blocks an address, and an AS, over the request rate', async () => {
    const id = await site('rate', {
      requestRateIp: { threshold: 1000, windowSeconds: 60 },
      requestRateAsn: { mode: 'enforce', threshold: 1500, windowSeconds: 60 },
    });
    await post(
      id,
      batch({
        addressCounts: [
          { ip: '203.0.113.80', count: 600 },
          { ip: '203.0.113.81', count: 500 },
        ],
      }),
    );
    await post(
      id,
      batch(
        {
          addressCounts: [
            { ip: '203.0.113.80', count: 600 },
            { ip: '192.0.2.9', count: 10 },
          ],
        },
        'web-2:1',
      ),
    );
    const ip = await blockBy(id, 'requestRateIp');
    expect(ip).toMatchObject({
      subject: { kind: 'ip', addresses: ['203.0.113.80'] },
      evidence: { count: 1200, threshold: 1000 },
    });
    const asn = await blockBy(id, 'requestRateAsn');
    expect(asn).toMatchObject({ subject: { kind: 'asn', asn: 64501 }, evidence: { count: 1700 } });
    expect((await blocks(id)).some((b) => JSON.stringify(b.subject).includes('203.0.113.81'))).toBe(
      false,
    );
  });

  it('blocks an address that used a known-bad user agent', async () => {
    const id = await site('agents');
    const scan = event('192.0.2.90', 'Mozilla/5.0 (compatible; Nuclei - Open-source project)');
    await post(
      id,
      batch({ events: [event('192.0.2.91', 'Mozilla/5.0 (X11; Linux x86_64)'), scan] }),
    );
    const block = await blockBy(id, 'badUserAgents');
    expect(block).toMatchObject({
      subject: { kind: 'ip', addresses: ['192.0.2.90'] },
      evidence: { count: 1, sampleRequestIds: [scan.requestId] },
    });
  });

  it('publishes monitor-mode rules, and rate limits instead of blocks, as configured', async () => {
    const id = await site('modes', {
      failedLoginsPerIp: { mode: 'monitor', action: 'rate_limit', threshold: 2 },
    });
    await post(
      id,
      batch({ signals: [1, 2].map(() => signal('192.0.2.95', 'login_failed', null)) }),
    );
    const block = await blockBy(id, 'failedLoginsPerIp');
    expect(block).toMatchObject({ mode: 'monitor', action: 'rate_limit' });
    await snapshotHas(id, block.ruleId);
    const rule = (await snapshotRulesOf(id)).find((r) => r.id === block.ruleId);
    expect(rule).toMatchObject({
      type: 'rate_limit',
      mode: 'monitor',
      ranges: ['192.0.2.95'],
      key: { kind: 'ip' },
    });
  });

  it('never blocks what an allow rule covers, and records why', async () => {
    const id = await site('allowed', { failedLoginsPerAccount: { enabled: false } }, [
      { id: 'office', type: 'ip', action: 'allow', ranges: ['198.51.100.0/24'] },
      { id: 'partner-as', type: 'asn', action: 'allow', asns: [64501] },
    ]);
    const signals = [
      ...Array.from({ length: 5 }, () => signal('198.51.100.7', 'login_failed', null)),
      ...Array.from({ length: 5 }, () => signal('203.0.113.7', 'login_failed', null)),
    ];
    await post(id, batch({ signals }));
    const spared = await waitFor('both spared', async () => {
      const list = await blocks(id, 'allowed');
      return list.length === 2 ? list : undefined;
    });
    expect(spared.map((b) => b.allowedBy[0]).sort()).toEqual(['office', 'partner-as']);
    expect(await blocks(id, 'active')).toEqual([]);
    const rules = await snapshotRulesOf(id);
    expect(rules.some((r) => r.id.startsWith('auto:'))).toBe(false);
  });

  it('drops an expired block from the next snapshot', async () => {
    const id = await site('expiry', { failedLoginsPerIp: { threshold: 1, blockSeconds: 2 } });
    await post(id, batch({ signals: [signal('192.0.2.100', 'login_failed', null)] }));
    const block = await blockBy(id, 'failedLoginsPerIp');
    await snapshotHas(id, block.ruleId);
    await snapshotHas(id, block.ruleId, false); // within the 2 s and a sweep (5 s)
    expect(
      (await c().admin<AutomaticBlockView>('GET', `/v1/sites/${id}/automatic-blocks/${block.id}`))
        .body.status,
    ).toBe('expired');
  });

  it('revokes a block through the API: out of the snapshot, and the detector may fire again', async () => {
    const id = await site('revoke', { failedLoginsPerIp: { threshold: 1 } });
    await post(id, batch({ signals: [signal('192.0.2.110', 'login_failed', null)] }));
    const block = await blockBy(id, 'failedLoginsPerIp');
    await snapshotHas(id, block.ruleId);
    const revoked = await c().admin<AutomaticBlockView>(
      'DELETE',
      `/v1/sites/${id}/automatic-blocks/${block.id}`,
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', id: block.id });
    expect(revoked.body.revokedAt).not.toBeNull();
    await snapshotHas(id, block.ruleId, false);
    await post(id, batch({ signals: [signal('192.0.2.110', 'login_failed', null)] }));
    const again = await blockBy(id, 'failedLoginsPerIp');
    expect(again.id).not.toBe(block.id);
  });

  it('keeps a block as a permanent rule of the site, revoking the block', async () => {
    const id = await site('keep', { failedLoginsPerIp: { threshold: 1 } });
    await post(id, batch({ signals: [signal('192.0.2.111', 'login_failed', null)] }));
    const block = await blockBy(id, 'failedLoginsPerIp');
    const kept = await c().admin<Rule>('POST', `/v1/sites/${id}/automatic-blocks/${block.id}/keep`);
    expect(kept.status, kept.text).toBe(201);
    expect(kept.body).toMatchObject({
      id: `kept-${block.id}`,
      type: 'ip',
      action: 'block',
      mode: 'enforce',
      ranges: ['192.0.2.111'],
    });
    expect(kept.body.expiresAt).toBeUndefined();
    const stored = await c().admin<Rule>('GET', `/v1/sites/${id}/rules/kept-${block.id}`);
    expect(stored.body).toEqual(kept.body);
    expect(
      (await c().admin<AutomaticBlockView>('GET', `/v1/sites/${id}/automatic-blocks/${block.id}`))
        .body.status,
    ).toBe('revoked');
    await snapshotHas(id, `kept-${block.id}`);
    await snapshotHas(id, block.ruleId, false);
    const again = await c().admin('POST', `/v1/sites/${id}/automatic-blocks/${block.id}/keep`);
    expect(again.status).toBe(409);
    expect(again.text).toContain('revoked');
    expect((await c().admin('POST', `/v1/sites/${id}/automatic-blocks/nope/keep`)).status).toBe(
      404,
    );
  });

  it('blocks a key over its rule’s fleet-wide limit, summed over instances', async () => {
    const id = await site('fleet', {}, [
      {
        id: 'login-rate',
        type: 'rate_limit',
        when: [{ field: 'path', match: 'exact', value: '/login' }],
        key: { kind: 'ip' },
        windowSeconds: 60,
        limit: 30,
      },
      {
        id: 'api-rate',
        type: 'rate_limit',
        key: { kind: 'header', name: 'x-api-key' },
        windowSeconds: 60,
        limit: 100,
      },
    ]);
    // Three instances each within their share (10), 36 in all: over the budget of 30.
    for (const instance of ['web-1:1', 'web-2:1', 'web-3:1'])
      await post(
        id,
        batch(
          {
            rateLimitKeys: [
              { ruleId: 'login-rate', key: '192.0.2.120', count: 12 },
              { ruleId: 'login-rate', key: '192.0.2.121', count: 5 },
              { ruleId: 'api-rate', key: 'key-123', count: 40 },
              { ruleId: 'gone', key: '192.0.2.122', count: 500 },
            ],
          },
          instance,
        ),
      );
    const fleet = await waitFor('two fleet blocks', async () => {
      const list = (await blocks(id, 'active')).filter((b) => b.detector === 'fleetRateLimits');
      return list.length === 2 ? list : undefined;
    });
    const byRule = new Map(fleet.map((b) => [b.evidence.ruleId, b]));
    expect(byRule.get('login-rate')).toMatchObject({
      subject: { kind: 'ip', addresses: ['192.0.2.120'] },
      evidence: { count: 36, threshold: 30, windowSeconds: 60, key: '192.0.2.120' },
    });
    expect(
      Date.parse(byRule.get('login-rate')?.expiresAt ?? '') -
        Date.parse(byRule.get('login-rate')?.createdAt ?? ''),
    ).toBe(60_000);
    expect(byRule.get('api-rate')?.subject).toEqual({
      kind: 'header',
      name: 'x-api-key',
      value: 'key-123',
    });
    await snapshotHas(id, byRule.get('api-rate')?.ruleId ?? '');
    expect(
      (await snapshotRulesOf(id)).find((r) => r.id === byRule.get('api-rate')?.ruleId),
    ).toMatchObject({
      type: 'pattern',
      action: 'block',
      when: [{ field: 'header', name: 'x-api-key', match: 'exact', value: 'key-123' }],
    });
  });
});
