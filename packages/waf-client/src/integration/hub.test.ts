/**
 * The client against the REAL hub (compiled `apps/hub/dist/main.js` as a child process, with its
 * own redis-server): first download and 304 polls, a rule change swapped in, the hub's
 * instance list showing our version, the hub going down mid-run and at start (fail mode, the
 * file on disk, recovery when it is back), a rotated key (401: logged once, never the key), and
 * reports delivered and counted by the hub.
 */
import { type Hub, startHub } from '@rampart/test-services/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  eventually,
  startApp,
  type TestApp,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { temporaryDirectory } from '../test-support/snapshots.js';

const SITE = 'shop';
let hub: Hub;
let key: string;
const clients: TestClient[] = [];
const apps: TestApp[] = [];

function client(options: Parameters<typeof testClient>[0]): TestClient {
  const c = testClient({ hubUrl: hub.url, siteKey: key, ...options });
  clients.push(c);
  return c;
}

async function app(c: TestClient): Promise<TestApp> {
  const a = await startApp(c.rampart);
  apps.push(a);
  return a;
}

beforeAll(async () => {
  hub = await startHub();
  key = await hub.createSite(SITE);
  await hub.addRule(SITE, {
    id: 'no-wp',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
  });
}, 90_000);

afterAll(async () => {
  for (const a of apps) await a.close();
  for (const c of clients) await c.close();
  if (hub) {
    expect(hub.output()).not.toContain(key);
    await hub.close(); // also fails if the admin token or any issued key was ever logged
  }
}, 60_000);

describe('with the real hub', () => {
  let main: TestClient;
  let mainApp: TestApp;

  it('downloads the snapshot (gzip), enforces it, then holds a blocking poll at the hub', async () => {
    main = client({
      syncIntervalMs: 200,
      syncBackoffMaxMs: 500,
      instanceId: 'web-1',
      reportIntervalMs: 200,
    });
    await main.rampart.ready();
    mainApp = await app(main);
    expect(main.rampart.stats()).toMatchObject({
      snapshotVersion: 1,
      sync: { downloads: 1, failures: 0 },
    });
    expect((await call(mainApp.port, '/wp-admin/setup.php')).status).toBe(403);
    expect((await call(mainApp.port, '/shop')).status).toBe(200);
    await eventually('the hub holding the next poll', async () => {
      const metrics = await hub.admin<{ heldPolls: number }>('GET', '/v1/metrics');
      return metrics.heldPolls >= 1;
    });
    expect(main.rampart.stats().sync).toMatchObject({ pollMode: 'blocking', downloads: 1 });
    const instances = await hub.admin<{ instanceId: string; snapshotVersion: number | null }[]>(
      'GET',
      `/v1/sites/${SITE}/instances`,
    );
    expect(JSON.stringify(instances)).toContain('web-1');
  });

  it('polls on an interval with If-None-Match and gets 304s when blocking polls are off', async () => {
    const plain = client({ syncIntervalMs: 200, syncWaitMs: 0 });
    await plain.rampart.ready();
    await eventually('two more polls', () => plain.rampart.stats().sync.successes >= 3);
    expect(plain.rampart.stats().sync).toMatchObject({ pollMode: 'interval', downloads: 1 });
  });

  it('swaps in a new version after a rule change, telling onSnapshot listeners', async () => {
    const seen: number[] = [];
    const stop = main.rampart.onSnapshot((snapshot) => seen.push(snapshot.version));
    expect(seen).toEqual([1]); // the one in use, at once
    const version = await hub.addRule(SITE, {
      id: 'bad-ip',
      type: 'ip',
      action: 'block',
      ranges: ['2001:db8:bad::/48'],
    });
    await eventually(`version ${version}`, () => main.rampart.stats().snapshotVersion === version);
    // Only the pages that changed: main holds the previous version, the hub keeps it.
    expect(main.rampart.stats().sync).toMatchObject({ downloads: 2, deltaDownloads: 1 });
    expect(seen).toEqual([1, version]);
    stop();
  });

  it('brings a publication to every instance of a fleet within about a second', async () => {
    const fleet = [1, 2, 3, 4].map((i) => client({ instanceId: `fleet-${i}` }));
    await Promise.all(fleet.map((c) => c.rampart.ready()));
    const held = () => hub.admin<{ heldPolls: number }>('GET', '/v1/metrics');
    await eventually('every instance held', async () => (await held()).heldPolls >= 5);
    const version = await hub.addRule(SITE, {
      id: 'fleet',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/fleet-only' }],
    });
    await eventually(`the fleet on version ${version}`, () =>
      fleet.every((c) => c.rampart.stats().snapshotVersion === version),
    );
    const [latest] = await hub.admin<{ version: number; createdAt: string }[]>(
      'GET',
      `/v1/sites/${SITE}/snapshots`,
    );
    expect(latest?.version).toBe(version);
    const publishedAt = Date.parse(latest?.createdAt ?? '');
    const lags = fleet.map((c) => (c.rampart.stats().sync.lastSwapAt ?? 0) - publishedAt);
    console.log(`[fleet] publication to enforcement on 4 instances: ${lags.join(', ')} ms`);
    expect(Math.max(...lags)).toBeLessThan(5000);
    for (const c of fleet) expect(c.rampart.stats().sync.deltaDownloads).toBe(1);
  });

  it('delivers its report batches to the hub, which counts every request', async () => {
    for (let i = 0; i < 3; i++) expect((await call(mainApp.port, '/wp-admin/x')).status).toBe(403);
    await eventually('the blocks counted by the hub', async () => {
      const traffic = await hub.admin<{ minutes: { blocked: number }[] }>(
        'GET',
        `/v1/sites/${SITE}/traffic`,
      );
      return traffic.minutes.reduce((n, m) => n + m.blocked, 0) >= 4; // and the first test's
    });
    const events = await hub.admin<{ path: string; instance: string }[]>(
      'GET',
      `/v1/sites/${SITE}/events?outcome=blocked`,
    );
    expect(events.map((e) => e.path)).toContain('/wp-admin/x');
    expect(events[0]?.instance).toBe('web-1');
    expect(main.rampart.stats().reports).toMatchObject({ stoppedReason: null, batchesFailed: 0 });
  });

  it('keeps enforcing while the hub is down, uses the file on disk or the fail mode at start, recovers', async () => {
    const version = main.rampart.stats().snapshotVersion;
    await hub.stop();
    // down mid-run: the snapshot in use stays
    const failuresBefore = main.rampart.stats().sync.failures;
    await eventually('failed polls', () => main.rampart.stats().sync.failures > failuresBefore);
    expect((await call(mainApp.port, '/wp-admin')).status).toBe(403);
    expect(main.rampart.stats().snapshotVersion).toBe(version);
    // down at start, with a snapshot on disk (main's data directory): used at once
    const fromDisk = client({ dataDir: main.dataDir, keepDataDir: true });
    await fromDisk.rampart.ready();
    expect(fromDisk.rampart.stats()).toMatchObject({
      snapshotVersion: version,
      sync: { loadedFromDisk: true },
    });
    // down at start with nothing on disk: the fail mode applies
    const empty = temporaryDirectory();
    const fresh = client({
      dataDir: empty.dir,
      failMode: 'closed',
      syncIntervalMs: 200,
      syncBackoffMaxMs: 500,
    });
    await fresh.rampart.ready();
    const freshApp = await app(fresh);
    expect((await call(freshApp.port, '/shop')).status).toBe(503);

    await hub.start();
    await eventually(
      'the fresh client gets the snapshot',
      () => fresh.rampart.stats().snapshotVersion === version,
      20_000,
    );
    expect((await call(freshApp.port, '/shop')).status).toBe(200);
    expect((await call(freshApp.port, '/wp-admin')).status).toBe(403);
    // main retried with backoff and holds a poll again: the next publication reaches it.
    const next = await hub.addRule(SITE, {
      id: 'after-restart',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/after-restart' }],
    });
    await eventually(
      `main on version ${next}`,
      () => main.rampart.stats().snapshotVersion === next,
      20_000,
    );
    // The poll that brought it ends after the swap, and says so.
    await eventually('the recovery logged', () =>
      /sync recovered after \d+ failed attempt/.test(main.logger.lines.join('\n')),
    );
    empty.remove();
  }, 90_000);

  it('stops syncing when the key is rotated (401), logging once and never the key', async () => {
    const old = client({ syncIntervalMs: 200 });
    await old.rampart.ready();
    expect(old.rampart.stats().snapshotVersion).not.toBeNull();
    await hub.admin('POST', `/v1/sites/${SITE}/keys/rotate`, {});
    await eventually('401', () => old.rampart.stats().sync.unauthorized, 20_000);
    const polls = old.rampart.stats().sync.successes + old.rampart.stats().sync.failures;
    await new Promise((r) => setTimeout(r, 600));
    expect(old.rampart.stats().sync.successes + old.rampart.stats().sync.failures).toBe(polls);
    const log = old.logger.lines.join('\n');
    expect(log.match(/refused the site key/g)).toHaveLength(1);
    expect(log).not.toContain(key);
    // the snapshot in use stays in force
    const oldApp = await app(old);
    expect((await call(oldApp.port, '/wp-admin')).status).toBe(403);
  });
});
