/**
 * Report batches as a WAF client sends them (waf-client README, "Reports"), for tests that feed
 * the real hub: a batch of any parts, login signals, posting it gzipped with a site key, and the
 * rules of the snapshot a site's clients would download.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Rule } from '@rampart/rules-core/rules/model';
import { type HubClient, withSnapshot } from './hub-client.js';

const iso = (ms = Date.now()) => new Date(ms).toISOString();

/** A version-1 batch with nothing in it but `parts`, its period the last second. */
export function reportBatch(parts: Record<string, unknown>, instance = 'web-1:1') {
  return {
    version: 1,
    batchId: randomUUID(),
    instance,
    snapshotVersion: 1,
    periodStart: iso(Date.now() - 1000),
    periodEnd: iso(),
    passSampleRate: 0.01,
    dropped: 0,
    counts: [],
    events: [],
    ...parts,
  };
}

/** A login signal from `ip`; `account` is the account's HMAC (64 hex digits) or null. */
export function loginSignal(
  ip: string,
  kind: 'login_failed' | 'login_succeeded',
  account: string | null,
) {
  return {
    kind,
    requestId: randomUUID(),
    time: iso(),
    ip,
    path: '/login',
    userAgent: 'python-requests/2.32',
    account,
  };
}

/** A blocked request's event, as the client reports it. */
export function blockedEvent(overrides: Record<string, unknown> = {}) {
  return {
    requestId: randomUUID(),
    time: iso(),
    ip: '203.0.113.9',
    method: 'GET',
    host: 'shop.example',
    path: '/wp-admin/setup.php',
    userAgent: 'sqlmap/1.7',
    action: 'block',
    mode: 'enforce',
    outcome: 'blocked',
    ruleId: 'wp',
    category: 'pattern',
    monitoredRuleId: null,
    snapshotVersion: 1,
    sampled: false,
    ...overrides,
  };
}

/** POSTs `body` to the hub's `/v1/reports`, gzipped, with `siteKey`; resolves with the answer. */
export function postReport(hubUrl: string, siteKey: string, body: unknown): Promise<Response> {
  return fetch(`${hubUrl}/v1/reports`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      authorization: `Bearer ${siteKey}`,
    },
    body: gzipSync(JSON.stringify(body)),
  });
}

/** The rules of the site's current snapshot, downloaded and opened as a client would. */
export async function snapshotRules(client: HubClient, siteKey: string): Promise<readonly Rule[]> {
  const answer = await client.site(siteKey, '/v1/snapshot');
  if (answer.status !== 200) throw new Error(`GET /v1/snapshot answered ${answer.status}`);
  return withSnapshot(answer.bytes, (snapshot) => snapshot.rules);
}
