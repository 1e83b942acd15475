/**
 * Blocking polls and page deltas against a real HTTP server playing the hub: a held poll brings a
 * published version at once; the new version is rebuilt from a delta against the one in use; a
 * damaged delta, or one that rebuilds another file, falls back to the whole file with the old
 * snapshot kept meanwhile; a hub that does not hold polls, or holds too many, sends the client
 * back to its interval; and a hub from before the version lookup is polled the old way.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { encodePageDelta } from '@rampart/rules-core/snapshot/page-delta';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeHub, type FakeHubOptions, startFakeHub } from '../test-support/fake-hub.js';
import {
  call,
  eventually,
  SITE_KEY,
  startApp,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';

const pattern = (id: string, path: string) => ({
  id,
  type: 'pattern',
  action: 'block',
  when: [{ field: 'path', match: 'exact', value: path }],
});
const V1 = buildSnapshot(STANDARD_RULES, 1);
const V2 = buildSnapshot([...STANDARD_RULES, pattern('v2', '/v2-only')], 2);
const V3 = buildSnapshot([...STANDARD_RULES, pattern('v3', '/v3-only')], 3);

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function hubWith(options: FakeHubOptions & { holds?: boolean } = {}): Promise<FakeHub> {
  const hub = await startFakeHub(SITE_KEY, V1, options);
  hub.holds = options.holds ?? true;
  cleanup.push(() => hub.close());
  return hub;
}

function client(options: Parameters<typeof testClient>[0]): TestClient {
  const c = testClient({ syncTimeoutMs: 2000, ...options });
  cleanup.push(() => c.close());
  return c;
}

const waitsOf = (hub: FakeHub) =>
  hub.polls().map((r) => /[?&]wait=(\d+)ms/.exec(r[':path'])?.[1] ?? null);

describe('blocking polls', () => {
  it('bring a published version at once, held by the hub in between', async () => {
    const hub = await hubWith();
    const c = client({ hubUrl: hub.url, syncWaitMs: 20_000 });
    await c.rampart.ready();
    expect(c.rampart.stats().snapshotVersion).toBe(1);
    await eventually('a held poll', () => hub.held() === 1);
    expect(c.rampart.stats().sync.pollMode).toBe('blocking');
    const published = Date.now();
    hub.publish(V2);
    await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    const tookMs = Date.now() - published;
    expect(tookMs).toBeLessThan(1000);
    // The first poll is answered at once (ready() does not wait); the later ones may be held,
    // for the wait asked for, jittered by ±10%.
    const waits = waitsOf(hub);
    expect(waits[0]).toBeNull();
    for (const wait of waits.slice(1)) {
      expect(Number(wait)).toBeGreaterThanOrEqual(18_000);
      expect(Number(wait)).toBeLessThanOrEqual(22_000);
    }
    await eventually('the next poll held again', () => hub.held() === 1);
  });

  it('rebuild the new version from a page delta against the one in use', async () => {
    const hub = await hubWith();
    const c = client({ hubUrl: hub.url });
    await c.rampart.ready();
    const app = await startApp(c.rampart);
    cleanup.push(() => app.close());
    await eventually('a held poll', () => hub.held() === 1);
    hub.publish(V2);
    await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    expect(c.rampart.stats().sync).toMatchObject({
      downloads: 2,
      deltaDownloads: 1,
      deltaFailures: 0,
    });
    expect((await call(app.port, '/v2-only')).status).toBe(403);
    const paths = hub.requests.map((r) => r[':path']);
    expect(paths).toContain(`/v1/snapshots/${V2.sha256}/delta/${V1.sha256}`);
    expect(paths).not.toContain(`/v1/snapshots/${V2.sha256}`);
    expect(readdirSync(join(c.dataDir, 'snapshots')).sort()).toEqual(
      [`${V1.sha256}.sqlite`, `${V2.sha256}.sqlite`].sort(),
    );
  });

  const unusable: [string, () => Buffer][] = [
    ['damaged', () => Buffer.from(encodePageDelta(V1.bytes, V2.bytes)).fill(7, 100, 140)],
    ['made for another base', () => encodePageDelta(V3.bytes, V2.bytes)],
    ['rebuilding another version', () => encodePageDelta(V1.bytes, V3.bytes)],
    ['not a delta at all', () => Buffer.from('<html>502 Bad Gateway</html>')],
  ];

  it.each(unusable)('fall back to the whole file when the delta is %s', async (_name, bytes) => {
    const hub = await hubWith();
    const c = client({ hubUrl: hub.url });
    await c.rampart.ready();
    await eventually('a held poll', () => hub.held() === 1);
    hub.misbehave = { kind: 'delta', bytes: bytes() };
    hub.publish(V2);
    await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    expect(c.rampart.stats().sync).toMatchObject({
      downloads: 2,
      deltaDownloads: 0,
      deltaFailures: 1,
      failures: 0,
    });
    expect(hub.requests.map((r) => r[':path'])).toContain(`/v1/snapshots/${V2.sha256}`);
    expect(c.logger.lines.join('\n')).toMatch(/page delta to version 2 was not usable/);
    expect(readdirSync(join(c.dataDir, 'snapshots')).sort()).toEqual(
      [`${V1.sha256}.sqlite`, `${V2.sha256}.sqlite`].sort(),
    );
  });

  it('keep the snapshot in use while a refused delta and the whole file both fail', async () => {
    const hub = await hubWith();
    const c = client({ hubUrl: hub.url, syncTimeoutMs: 500, syncBackoffMaxMs: 300 });
    await c.rampart.ready();
    const app = await startApp(c.rampart);
    cleanup.push(() => app.close());
    await eventually('a held poll', () => hub.held() === 1);
    hub.misbehave = { kind: 'delta', bytes: encodePageDelta(V3.bytes, V2.bytes), fileStalls: true };
    hub.publish(V2);
    await eventually('two failed attempts', () => c.rampart.stats().sync.failures >= 2);
    expect(c.rampart.stats()).toMatchObject({ snapshotVersion: 1 });
    expect(c.rampart.stats().sync.deltaDownloads).toBe(0);
    expect((await call(app.port, '/wp-admin')).status).toBe(403); // version 1 still enforced
    expect((await call(app.port, '/v2-only')).status).toBe(200);
    expect(readdirSync(join(c.dataDir, 'snapshots'))).toEqual([`${V1.sha256}.sqlite`]);
    hub.misbehave = { kind: 'none' };
    await eventually(
      'version 2 once the hub behaves',
      () => c.rampart.stats().snapshotVersion === 2,
    );
    expect(c.rampart.stats().sync.deltaDownloads).toBe(1);
  });

  it('give way to the interval where the hub answers at once without holding', async () => {
    const hub = await hubWith({ holds: false });
    const c = client({ hubUrl: hub.url, syncIntervalMs: 300, syncWaitMs: 10_000 });
    await c.rampart.ready();
    await eventually('three more polls', () => c.rampart.stats().sync.successes >= 4);
    expect(c.rampart.stats().sync.pollMode).toBe('interval');
    // One blocking poll was tried; the hub answered it at once, unmarked: the rest are plain.
    const waits = waitsOf(hub);
    expect(waits.filter((w) => w !== null)).toHaveLength(1);
    expect(c.logger.lines.filter((l) => l.includes('answered a blocking poll after'))).toHaveLength(
      1,
    );
    hub.publish(V2);
    await eventually(
      'version 2 at the next interval',
      () => c.rampart.stats().snapshotVersion === 2,
    );
  });

  it('wait an interval when the hub says it holds too many polls', async () => {
    const hub = await hubWith({ holds: false });
    const c = client({ hubUrl: hub.url, syncIntervalMs: 400, syncWaitMs: 10_000 });
    await c.rampart.ready();
    hub.misbehave = { kind: 'status', status: 304, headers: { 'x-rampart-poll': 'busy' } };
    const before = hub.polls().length;
    await eventually('two busy answers', () => c.rampart.stats().sync.busyPolls >= 2, 5000);
    const polls = hub.polls().slice(before);
    expect(polls.length).toBeLessThanOrEqual(3); // at most one per interval, not a tight loop
    expect(c.rampart.stats().sync.pollMode).toBe('blocking');
  });

  it('poll GET /v1/snapshot on a hub from before the version lookup', async () => {
    const hub = await hubWith({ protocol: 1, holds: false });
    const c = client({ hubUrl: hub.url, syncIntervalMs: 200 });
    await c.rampart.ready();
    expect(c.rampart.stats().snapshotVersion).toBe(1);
    expect(hub.requests.map((r) => r[':path'].split('?')[0])).toEqual([
      '/v1/snapshot/version',
      '/v1/snapshot',
    ]);
    expect(c.logger.lines.join('\n')).toContain('polling GET /v1/snapshot, whole files only');
    hub.publish(V2);
    await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    expect(hub.requests.filter((r) => r[':path'].startsWith('/v1/snapshot/version'))).toHaveLength(
      1,
    );
  });
});
