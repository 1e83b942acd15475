/**
 * `rampart.signal`: what the app knows about a request reaches the hub promptly and unsampled,
 * with the account only as an HMAC under the site's key from the snapshot, never in clear.
 */
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { RampartOptions } from '../config/options.js';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  eventually,
  fakeRequest,
  fakeResponse,
  SITE_KEY,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { type ReportReceiver, startReportReceiver } from '../test-support/report-receiver.js';
import { buildSnapshot, type SnapshotBytes, STANDARD_RULES } from '../test-support/snapshots.js';
import { accountDigest } from './app-signals.js';

const SIGNAL_KEY = 'a1'.repeat(32);

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(
  snapshot: SnapshotBytes | null,
  options: Partial<RampartOptions> = {},
): Promise<{ client: TestClient; receiver: ReportReceiver; hub: FakeHub }> {
  const hub = await startFakeHub(SITE_KEY, snapshot);
  cleanup.push(() => hub.close());
  const receiver = await startReportReceiver();
  cleanup.push(() => receiver.close());
  // A report interval far beyond the test: whatever arrives was sent because it was urgent.
  const client = testClient({
    hubUrl: hub.url,
    reportUrl: receiver.url,
    reportIntervalMs: 600_000,
    passSampleRate: 0,
    ...options,
  });
  cleanup.push(() => client.close());
  if (snapshot) await client.rampart.ready();
  return { client, receiver, hub };
}

/** A login request that went through the middleware, as the app's controller sees it. */
function login(client: TestClient, ip: string) {
  const req = fakeRequest('/login?next=/cart', ip, 'POST', { 'user-agent': 'curl/8.5' });
  client.rampart.middleware(req, fakeResponse(), () => {});
  return req;
}

describe('rampart.signal', () => {
  it('sends every signal within a quarter second, the account as the HMAC of the site key', async () => {
    const { client, receiver } = await setup(
      buildSnapshot(STANDARD_RULES, 3, { signalKey: SIGNAL_KEY }),
    );
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      const req = login(client, `198.51.100.${i}`);
      client.rampart.signal(req, 'login_failed', { account: ` Alice@Example.com ` });
    }
    client.rampart.signal(login(client, '198.51.100.99'), 'login_succeeded', { account: 'bob' });
    await eventually('the signals sent', () =>
      receiver.batches.reduce((n, b) => n + b.signals.length, 0) === 21 ? true : undefined,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    const signals = receiver.batches.flatMap((b) => b.signals);
    const alice = accountDigest(SIGNAL_KEY, 'alice@example.com');
    expect(alice).toMatch(/^[0-9a-f]{64}$/);
    expect(signals[0]).toMatchObject({
      kind: 'login_failed',
      ip: '198.51.100.0',
      path: '/login',
      userAgent: 'curl/8.5',
      account: alice,
    });
    expect(signals[0]?.requestId).toMatch(/.+/);
    expect(signals.filter((s) => s.account === alice)).toHaveLength(20);
    expect(signals.at(-1)).toMatchObject({
      kind: 'login_succeeded',
      account: accountDigest(SIGNAL_KEY, 'bob'),
    });
    // Counted as sent once the hub's answer is back, just after the receiver has the batch.
    await eventually('the signals counted as sent', () =>
      client.rampart.stats().reports.signalsSent === 21 ? true : undefined,
    );
    expect(client.rampart.stats().reports.signals).toBe(21);
  });

  it('never sends the account in clear, whatever else the batch holds', async () => {
    const { client, receiver } = await setup(
      buildSnapshot(STANDARD_RULES, 3, { signalKey: SIGNAL_KEY }),
    );
    client.rampart.signal(login(client, '192.0.2.7'), 'login_failed', {
      account: 'secret-user@example.com',
    });
    await eventually('a batch', () => receiver.bodies.length >= 1 || undefined);
    const body = gunzipSync(receiver.bodies[0] as Buffer).toString('utf8');
    expect(body).not.toContain('secret-user');
    expect(body).toContain(accountDigest(SIGNAL_KEY, 'secret-user@example.com'));
  });

  it('leaves the account out when the snapshot carries no key (never in clear)', async () => {
    const { client, receiver } = await setup(buildSnapshot(STANDARD_RULES, 3));
    client.rampart.signal(login(client, '192.0.2.8'), 'login_failed', { account: 'carol' });
    await eventually('a batch', () => receiver.batches.length >= 1 || undefined);
    expect(receiver.batches[0]?.signals).toEqual([
      expect.objectContaining({ kind: 'login_failed', account: null, ip: '192.0.2.8' }),
    ]);
  });

  it('takes the address from the socket when the request never went through the middleware', async () => {
    const { client, receiver } = await setup(
      buildSnapshot(STANDARD_RULES, 3, { signalKey: SIGNAL_KEY }),
    );
    client.rampart.signal(fakeRequest('/api/login', '203.0.113.5', 'POST'), 'login_failed');
    await eventually('a batch', () => receiver.batches.length >= 1 || undefined);
    expect(receiver.batches[0]?.signals[0]).toMatchObject({
      ip: '203.0.113.5',
      path: '/api/login',
      account: null,
    });
  });

  it('refuses a kind the hub does not know, and counts signals of a disabled client as dropped', async () => {
    const { client } = await setup(buildSnapshot(STANDARD_RULES, 3));
    expect(() =>
      client.rampart.signal(fakeRequest('/'), 'password_reset' as 'login_failed'),
    ).toThrow(/unknown kind "password_reset"/);
    const off = testClient({ mode: 'off' });
    cleanup.push(() => off.close());
    off.rampart.signal(fakeRequest('/login'), 'login_failed', { account: 'x' });
    expect(off.rampart.stats().reports).toMatchObject({ signals: 1, dropped: 1 });
  });

  it('sends refusals urgently too, with the requests per address of the period', async () => {
    const { client, receiver } = await setup(buildSnapshot(STANDARD_RULES, 3));
    for (let i = 0; i < 5; i++)
      client.rampart.middleware(fakeRequest('/', '192.0.2.1'), fakeResponse(), () => {});
    client.rampart.middleware(fakeRequest('/wp-admin', '192.0.2.2'), fakeResponse(), () => {});
    await eventually('a batch', () => receiver.batches.length >= 1 || undefined);
    expect(receiver.batches[0]?.events).toHaveLength(1);
    expect(receiver.batches[0]?.addressCounts).toEqual(
      expect.arrayContaining([
        { ip: '192.0.2.1', count: 5 },
        { ip: '192.0.2.2', count: 1 },
      ]),
    );
  });
});
