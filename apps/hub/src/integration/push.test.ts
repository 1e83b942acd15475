/**
 * Push and deltas against the real hub and Redis: blocking polls held until a publication (or
 * their wait), bounded in number, woken across two hub instances through Redis, answered when
 * the hub shuts down; the version lookup and page deltas that rebuild the new file exactly from
 * the old one; and a stampede of held polls after one publication.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { applyPageDelta, readPageDeltaHeader } from '@rampart/rules-core/snapshot/page-delta';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { startRedisServer } from '@rampart/test-services/redis-server';
import { randomToken } from '@rampart/test-services/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BinaryResponse, HubClient, httpGet } from '../test-support/hub-client.js';
import {
  freshPostgresDatabase,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';

afterAll(() => stopPostgres());

const wp = {
  id: 'wp',
  type: 'pattern',
  action: 'block',
  when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
};
const blockIp = (n: number) => ({
  id: `auto-${n}`,
  type: 'ip',
  action: 'block',
  ranges: [`203.0.113.${n}`],
});

/** A country CSV of `lines` distinct /24s (enough for the range tables to span many pages). */
function countryCsv(lines: number): string {
  const codes = ['DE', 'FR', 'NL', 'US', 'BR', 'JP'];
  const rows: string[] = [];
  for (let i = 0; i < lines; i++) {
    const a = 11 + (i >> 16);
    const b = (i >> 8) & 255;
    const c = i & 255;
    rows.push(`${a}.${b}.${c}.0,${a}.${b}.${c}.255,${codes[i % codes.length]}`);
  }
  return `${rows.join('\n')}\n`;
}

const timed = async <T>(run: () => Promise<T>) => {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
};

describe('blocking polls and deltas on one hub', () => {
  let stack: HubStack;
  const c = () => stack.client;
  let key: string;

  const poll = (path: string, headers: Record<string, string> = {}) =>
    c().site(key, path, { headers: { 'accept-encoding': 'identity', ...headers } });
  const etagOf = (response: BinaryResponse) => response.headers.get('etag') ?? '';

  beforeAll(async () => {
    stack = await startStack('sqlite', { env: { HUB_MAX_HELD_POLLS: '3' } });
    ({ key } = await c().createSite('Shop', 'shop'));
    const upload = await c().admin('PUT', '/v1/datasets/country/geo', undefined, {
      raw: countryCsv(20_000),
      headers: { 'content-type': 'text/csv' },
    });
    expect(upload.status, upload.text).toBeLessThan(300);
    await c().admin('POST', '/v1/sites/shop/rules', wp);
    await c().waitForVersion('shop', 1);
  });
  afterAll(() => stack?.stop());

  it('holds a poll for the current version until the next one is published', async () => {
    const first = await poll('/v1/snapshot');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-rampart-protocol')).toBe('2');
    const held = timed(() => poll('/v1/snapshot?wait=20s', { 'if-none-match': etagOf(first) }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await c().admin<{ heldPolls: number }>('GET', '/v1/metrics')).body.heldPolls).toBe(1);
    await c().admin('POST', '/v1/sites/shop/rules', blockIp(1));
    const published = await c().waitForVersion('shop', 2);
    const { value: answer, ms } = await held;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-rampart-poll')).toBe('held');
    expect(answer.headers.get('x-rampart-snapshot-version')).toBe(String(published.currentVersion));
    expect(ms).toBeLessThan(15_000); // answered by the publication, not by the 20 s wait
  });

  it('answers 304 when the wait ends first, up to a tenth early', async () => {
    const current = await poll('/v1/snapshot/version');
    const { value: answer, ms } = await timed(() =>
      poll('/v1/snapshot/version?wait=1500ms', { 'if-none-match': etagOf(current) }),
    );
    expect(answer.status).toBe(304);
    expect(answer.headers.get('x-rampart-poll')).toBe('held');
    expect(ms).toBeGreaterThan(1500 * 0.9 - 50);
    expect(ms).toBeLessThan(5000);
  });

  it('tells each poll the live fleet, and ends held polls when an instance joins', async () => {
    const as = (instance: string, extra: Record<string, string> = {}) => ({
      'x-rampart-instance': instance,
      ...extra,
    });
    const current = await poll('/v1/snapshot/version', as('fleet-a'));
    expect(current.headers.get('x-rampart-fleet-size')).toBe('1');
    const held = timed(() =>
      poll(
        '/v1/snapshot/version?wait=20s',
        as('fleet-a', { 'if-none-match': etagOf(current), 'x-rampart-fleet-size': '1' }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const joining = await poll('/v1/snapshot/version', as('fleet-b'));
    expect(joining.headers.get('x-rampart-fleet-size')).toBe('2');
    const { value: answer, ms } = await held;
    expect(answer.status).toBe(304);
    expect(answer.headers.get('x-rampart-poll')).toBe('held');
    expect(answer.headers.get('x-rampart-fleet-size')).toBe('2');
    expect(ms).toBeLessThan(5000); // ended by the join, not by the 20 s wait
    // A client still believing in one instance is answered at once, without a join.
    const stale = await timed(() =>
      poll(
        '/v1/snapshot/version?wait=20s',
        as('fleet-a', { 'if-none-match': etagOf(current), 'x-rampart-fleet-size': '1' }),
      ),
    );
    expect(stale.value.status).toBe(304);
    expect(stale.value.headers.get('x-rampart-fleet-size')).toBe('2');
    expect(stale.ms).toBeLessThan(2000);
    const listed = await c().admin<{ instanceId: string }[]>('GET', '/v1/sites/shop/instances');
    expect(listed.body.map((i) => i.instanceId).sort()).toEqual(['fleet-a', 'fleet-b']);
  });

  it('answers at once, without holding, past its bound of held polls', async () => {
    const current = await poll('/v1/snapshot/version');
    const etag = { 'if-none-match': etagOf(current) };
    const holds = [1, 2, 3].map(() => poll('/v1/snapshot/version?wait=2s', etag));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { value: refused, ms } = await timed(() => poll('/v1/snapshot/version?wait=2s', etag));
    expect(refused.status).toBe(304);
    expect(refused.headers.get('x-rampart-poll')).toBe('busy');
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(ms).toBeLessThan(1000);
    for (const answer of await Promise.all(holds)) expect(answer.status).toBe(304);
    const metrics = await c().admin<{ refusedPolls: number; heldPolls: number }>(
      'GET',
      '/v1/metrics',
    );
    expect(metrics.body.refusedPolls).toBeGreaterThanOrEqual(1);
    expect(metrics.body.heldPolls).toBe(0);
  });

  it('refuses a malformed or too long wait, naming the field', async () => {
    for (const wait of ['soon', '30h', '-1s', '1.5s']) {
      const answer = await poll(`/v1/snapshot?wait=${wait}`);
      expect(answer.status, wait).toBe(400);
      expect(answer.bytes.toString()).toContain('wait must be');
    }
    const tooLong = await poll('/v1/snapshot/version?wait=10m');
    expect(tooLong.status).toBe(400);
    expect(tooLong.bytes.toString()).toContain('wait must be at most 60s');
  });

  it('names the new version and a page delta from the one the client holds', async () => {
    const before = await poll('/v1/snapshot');
    const base = before.headers.get('x-rampart-snapshot-sha256') ?? '';
    await c().admin('POST', '/v1/sites/shop/rules', blockIp(2));
    const site = await c().waitForVersion(
      'shop',
      Number(before.headers.get('x-rampart-snapshot-version')) + 1,
    );

    const lookup = await poll('/v1/snapshot/version', { 'if-none-match': `"${base}"` });
    expect(lookup.status).toBe(200);
    const body = JSON.parse(lookup.bytes.toString()) as {
      version: number;
      sha256: string;
      bytes: number;
      url: string;
      delta: { from: string; url: string } | null;
    };
    expect(body.version).toBe(site.currentVersion);
    expect(body.url).toBe(`/v1/snapshots/${body.sha256}`);
    expect(body.delta).toEqual({ from: base, url: `/v1/snapshots/${body.sha256}/delta/${base}` });
    expect(lookup.headers.get('cache-control')).toBe('private, no-cache');

    const delta = await c().site(key, body.delta?.url ?? '', {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(delta.status).toBe(200);
    expect(delta.headers.get('content-type')).toBe('application/vnd.rampart.page-delta');
    expect(delta.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(delta.headers.get('content-encoding')).toBe('gzip');
    const raw = gunzipSync(delta.bytes);
    const rebuilt = applyPageDelta(before.bytes, raw);
    expect(rebuilt.length).toBe(body.bytes);
    const whole = await poll(body.url);
    expect(rebuilt.equals(whole.bytes)).toBe(true);
    // A rule change touches a few pages, whatever the size of the range tables.
    expect(readPageDeltaHeader(raw).pages).toBeLessThanOrEqual(8);
    expect(delta.bytes.length).toBeLessThan(whole.bytes.length * 0.05);

    // Without a version to start from, or from one the hub does not keep: no delta offered.
    const fresh = JSON.parse((await poll('/v1/snapshot/version')).bytes.toString());
    expect(fresh.delta).toBeNull();
    const unknown = await poll(`/v1/snapshots/${body.sha256}/delta/${'0'.repeat(64)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-rampart-protocol')).toBeNull(); // immutable: no per-client headers
    expect((await poll(`/v1/snapshots/${body.sha256}/delta/nothex`)).status).toBe(400);
  });

  it('answers polls held with a key when it is revoked, so the next one hears 401 at once', async () => {
    const { key: own } = await c().createSite('Kiosk', 'kiosk');
    await c().admin('POST', '/v1/sites/kiosk/rules', wp);
    await c().waitForVersion('kiosk', 1);
    const get = (path: string, headers: Record<string, string> = {}) =>
      c().site(own, path, { headers: { 'accept-encoding': 'identity', ...headers } });
    const current = await get('/v1/snapshot/version');
    const held = timed(() =>
      get('/v1/snapshot/version?wait=30s', { 'if-none-match': etagOf(current) }),
    );
    await waitForHeld(c(), 1);
    const rotated = await c().admin('POST', '/v1/sites/kiosk/keys/rotate', {});
    expect(rotated.status).toBe(201);
    const { value, ms } = await held;
    expect(value.status).toBe(304);
    expect(ms).toBeLessThan(10_000);
    expect((await get('/v1/snapshot/version')).status).toBe(401);
  });

  it('answers a stampede: 200 held polls, one publication, every one gets the new version', async () => {
    // This suite's hub holds at most 3 (see beforeAll); the stampede gets a hub of its own.
    const big = await startHub({ env: { HUB_MAX_HELD_POLLS: '1000' } });
    try {
      const client = new HubClient(big.url, big.adminToken, big.secrets);
      const { key: bigKey } = await client.createSite('Shop', 'shop');
      await client.admin('POST', '/v1/sites/shop/rules', wp);
      await client.waitForVersion('shop', 1);
      const v1 = await httpGet(`${big.url}/v1/snapshot/version`, {
        authorization: `Bearer ${bigKey}`,
      });
      const headers = {
        authorization: `Bearer ${bigKey}`,
        'if-none-match': v1.headers.get('etag') ?? '',
      };
      const answered: number[] = [];
      const polls = Array.from({ length: 200 }, () =>
        httpGet(`${big.url}/v1/snapshot/version?wait=30s`, headers).then((r) => {
          answered.push(Date.now());
          return r;
        }),
      );
      await waitForHeld(client, 200);
      await client.admin('POST', '/v1/sites/shop/rules', blockIp(9));
      const published = await client.waitForVersion('shop', 2);
      const answers = await Promise.all(polls);
      const [latest] = (
        await client.admin<{ createdAt: string }[]>('GET', '/v1/sites/shop/snapshots')
      ).body;
      const publishedAt = Date.parse(latest?.createdAt ?? '');
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const versions = answers.map((a) => JSON.parse(a.bytes.toString()).version);
      expect(new Set(versions)).toEqual(new Set([published.currentVersion]));
      const lastMs = Math.max(...answered) - publishedAt;
      console.log(`[push] 200 held polls all answered within ${lastMs} ms of the publication`);
      expect(lastMs).toBeLessThan(5000);
      const metrics = await client.admin<{ heldPolls: number; wokenPolls: number }>(
        'GET',
        '/v1/metrics',
      );
      expect(metrics.body).toMatchObject({ heldPolls: 0 });
      expect(metrics.body.wokenPolls).toBeGreaterThanOrEqual(200);
    } finally {
      await big.close();
    }
  });
});

async function waitForHeld(client: HubClient, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const metrics = await client.admin<{ heldPolls: number }>('GET', '/v1/metrics');
    if (metrics.body.heldPolls >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the hub never held ${count} polls`);
}

describe('two hub instances on one Redis, PostgreSQL and data directory', () => {
  let hubs: Hub[] = [];
  let dataDir: string;
  let a: HubClient;
  let key: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rampart-push-'));
    const [redis, databaseUrl] = await Promise.all([startRedisServer(), freshPostgresDatabase()]);
    const adminToken = randomToken();
    const options = { redis, databaseUrl, dataDir, adminToken };
    hubs = await Promise.all([startHub(options), startHub(options)]);
    a = new HubClient(hubs[0]?.url ?? '', adminToken);
    ({ key } = await a.createSite('Shop', 'shop'));
    await a.admin('POST', '/v1/sites/shop/rules', wp);
    await a.waitForVersion('shop', 1);
  });
  afterAll(async () => {
    const redis = hubs[0]?.redis;
    await Promise.all(hubs.map((hub) => hub.close()));
    for (const [i, hub] of hubs.entries()) a.expectNoSecret(`the output of hub ${i}`, hub.output());
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('wakes the polls held by both instances, whichever one builds', async () => {
    const headers = (etag: string) => ({ authorization: `Bearer ${key}`, 'if-none-match': etag });
    const current = await httpGet(`${hubs[0]?.url}/v1/snapshot/version`, {
      authorization: `Bearer ${key}`,
    });
    const etag = current.headers.get('etag') ?? '';
    const held = hubs.map((hub) =>
      timed(() => httpGet(`${hub.url}/v1/snapshot/version?wait=40s`, headers(etag))),
    );
    for (const hub of hubs) await waitForHeld(a.of(hub), 1);
    await a.admin('POST', '/v1/sites/shop/rules', blockIp(3));
    await a.waitForVersion('shop', 2);
    for (const { value, ms } of await Promise.all(held)) {
      expect(value.status).toBe(200);
      expect(ms).toBeLessThan(20_000); // the publication, on either instance, not the 40 s wait
    }
    const received = await Promise.all(
      hubs.map((hub) => a.of(hub).admin<{ announcementsReceived: number }>('GET', '/v1/metrics')),
    );
    // One instance built and woke its own poll; the other learned of it through Redis.
    expect(
      received.map((m) => m.body.announcementsReceived).reduce((x, y) => x + y),
    ).toBeGreaterThanOrEqual(1);
  });

  it('answers its held polls when it shuts down, so clients retry at once', async () => {
    const hub = hubs[1] as Hub;
    const current = await httpGet(`${hub.url}/v1/snapshot/version`, {
      authorization: `Bearer ${key}`,
    });
    const held = timed(() =>
      httpGet(`${hub.url}/v1/snapshot/version?wait=40s`, {
        authorization: `Bearer ${key}`,
        'if-none-match': current.headers.get('etag') ?? '',
      }).catch((error: Error) => ({
        status: 0,
        headers: new Headers(),
        bytes: Buffer.from(error.message),
      })),
    );
    await waitForHeld(a.of(hub), 1);
    const stopped = timed(() => hub.stop());
    const { value, ms } = await held;
    expect([503, 0]).toContain(value.status);
    if (value.status === 503) expect(value.headers.get('retry-after')).toBe('1');
    expect(ms).toBeLessThan(15_000);
    expect((await stopped).ms).toBeLessThan(10_000); // not the 40 s of the wait
    await hub.start();
  });
});
