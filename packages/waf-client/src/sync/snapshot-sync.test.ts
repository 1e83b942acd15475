/**
 * Sync against a real HTTP server playing the hub, including the ways a real hub never breaks:
 * 304 and the identity headers, new versions swapped in, corrupt / truncated / wrong-schema /
 * wrong-hash downloads (the previous snapshot stays in use, the failure is counted, no bad file
 * is kept), hub down at start (the file on disk is used at once) and mid-run (backoff, then
 * recovery), a refused key (logged once, without the key; polling stops), two clients sharing one
 * data directory, stale temporary files, retention, and a process SIGKILLed mid-download.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  call,
  eventually,
  SITE_KEY,
  startApp,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import {
  buildSnapshot,
  editDatabase,
  STANDARD_RULES,
  temporaryDirectory,
  withSchemaVersion,
} from '../test-support/snapshots.js';

const V1 = buildSnapshot(STANDARD_RULES, 1);
const V2 = buildSnapshot(
  [
    ...STANDARD_RULES,
    {
      id: 'v2',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'exact', value: '/v2-only' }],
    },
  ],
  2,
);

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function hubWith(snapshot: FakeHub['snapshot'], port = 0): Promise<FakeHub> {
  const hub = await startFakeHub(SITE_KEY, snapshot, { port });
  cleanup.push(() => hub.close());
  return hub;
}

function client(options: Parameters<typeof testClient>[0]): TestClient {
  // A short idle timeout: a poll stuck on a dying connection must not outlast the test's waits.
  const c = testClient({ syncTimeoutMs: 2000, ...options });
  cleanup.push(() => c.close());
  return c;
}

function files(dir: string): string[] {
  return readdirSync(join(dir, 'snapshots')).sort();
}

describe('snapshot sync', () => {
  it('downloads, verifies and stores the snapshot, then polls with If-None-Match and gets 304', async () => {
    const hub = await hubWith(V1);
    const c = client({ hubUrl: hub.url, syncIntervalMs: 150, instanceId: 'web-1' });
    await c.rampart.ready();
    expect(c.rampart.stats()).toMatchObject({
      snapshotVersion: 1,
      sync: { downloads: 1, failures: 0 },
    });
    expect(files(c.dataDir)).toEqual([`${V1.sha256}.sqlite`]);
    expect(JSON.parse(readFileSync(join(c.dataDir, 'current.json'), 'utf8'))).toEqual({
      sha256: V1.sha256,
      version: 1,
      site: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(readFileSync(join(c.dataDir, 'current.json'), 'utf8')).not.toContain(SITE_KEY);
    const first = hub.polls()[0];
    expect(first).toMatchObject({
      authorization: `Bearer ${SITE_KEY}`,
      'x-rampart-instance': 'web-1',
    });
    expect(first?.['accept-encoding']).toContain('gzip');
    expect(first?.['if-none-match']).toBeUndefined();
    await eventually('a second poll', () => c.rampart.stats().sync.successes >= 2);
    expect(hub.polls()[1]).toMatchObject({
      'if-none-match': `"${V1.sha256}"`,
      'x-rampart-snapshot-version': '1',
    });
    expect(c.rampart.stats().sync.downloads).toBe(1);
  });

  it('swaps in a new version while serving requests', async () => {
    const hub = await hubWith(V1);
    const c = client({ hubUrl: hub.url, syncIntervalMs: 150 });
    // ready() also resolves when the first poll fails (a loaded machine); the swap needs V1 in use
    await eventually('version 1', () => c.rampart.stats().snapshotVersion === 1);
    const app = await startApp(c.rampart);
    cleanup.push(() => app.close());
    expect((await call(app.port, '/v2-only')).status).toBe(200);
    const firstSwap = c.rampart.stats().sync;
    hub.snapshot = V2;
    await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    expect((await call(app.port, '/v2-only')).status).toBe(403);
    // The swap is bounded in time: from the poll that found version 2 to its use.
    const { lastSwapStartedAt, lastSwapAt } = c.rampart.stats().sync;
    expect(lastSwapStartedAt).toBeGreaterThan(firstSwap.lastSwapAt as number);
    expect(lastSwapAt).toBeGreaterThanOrEqual(lastSwapStartedAt as number);
    expect(lastSwapAt).toBeLessThanOrEqual(Date.now());
    expect(files(c.dataDir)).toEqual([`${V1.sha256}.sqlite`, `${V2.sha256}.sqlite`].sort());
    expect(c.logger.lines.join('\n')).toContain('snapshot version 2 in use (was 1)');
  });

  const broken: [string, () => FakeHub['misbehave'], string][] = [
    [
      'garbage announced with its own hash',
      () => ({ kind: 'body', bytes: Buffer.from('<html>502 Bad Gateway</html>'.repeat(50)) }),
      'not_sqlite',
    ],
    [
      'a body cut short (connection closed before Content-Length)',
      () => ({ kind: 'truncate', bytes: Math.floor(V2.bytes.length / 2) }),
      'hash',
    ],
    [
      'a truncated SQLite file announced as complete',
      () => ({ kind: 'body', bytes: V2.bytes.subarray(0, V2.bytes.length - 4096) }),
      'corrupt',
    ],
    [
      'another schema version',
      () => ({ kind: 'body', bytes: withSchemaVersion(V2, 2).bytes }),
      'schema_version',
    ],
    [
      'rules that do not validate',
      () => ({
        kind: 'body',
        bytes: editDatabase(V2, (db) =>
          db.prepare('UPDATE rules SET body = \'{"id":"x"}\' WHERE position = 0').run(),
        ).bytes,
      }),
      'invalid_content',
    ],
    [
      'a body that does not match the announced hash',
      () => ({ kind: 'body', bytes: V2.bytes, announcedSha256: 'f'.repeat(64) }),
      'hash',
    ],
  ];

  it.each(broken)(
    'keeps the previous snapshot when the hub serves %s',
    async (_name, misbehave, reason) => {
      const hub = await hubWith(V1);
      const c = client({ hubUrl: hub.url, syncIntervalMs: 100, syncBackoffMaxMs: 200 });
      await c.rampart.ready();
      const app = await startApp(c.rampart);
      cleanup.push(() => app.close());
      hub.snapshot = V2;
      hub.misbehave = misbehave();
      await eventually('two failed polls', () => c.rampart.stats().sync.failures >= 2);
      const stats = c.rampart.stats();
      expect(stats.snapshotVersion).toBe(1);
      if (reason !== 'hash')
        expect(
          stats.sync.rejected[reason as keyof typeof stats.sync.rejected],
        ).toBeGreaterThanOrEqual(1);
      else
        expect(stats.sync.lastError).toMatch(/SHA-256|terminated|closed|aborted|download failed/);
      // still enforcing version 1, and nothing but the good file is on disk (no temporary left)
      expect((await call(app.port, '/wp-admin')).status).toBe(403);
      expect((await call(app.port, '/v2-only')).status).toBe(200);
      expect(files(c.dataDir)).toEqual([`${V1.sha256}.sqlite`]);
      expect(JSON.parse(readFileSync(join(c.dataDir, 'current.json'), 'utf8')).sha256).toBe(
        V1.sha256,
      );
      // and once the hub serves a good file again, it is used
      hub.misbehave = { kind: 'none' };
      await eventually('version 2', () => c.rampart.stats().snapshotVersion === 2);
    },
  );

  it('uses the snapshot on disk at once when the hub is down at start', async () => {
    const hub = await hubWith(V1);
    const { dir, remove } = temporaryDirectory();
    cleanup.push(remove);
    const first = testClient({ hubUrl: hub.url, dataDir: dir });
    await first.rampart.ready();
    await first.close();
    await hub.close();
    const started = Date.now();
    const second = client({ hubUrl: hub.url, dataDir: dir });
    await second.rampart.ready();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(second.rampart.stats()).toMatchObject({
      snapshotVersion: 1,
      sync: { loadedFromDisk: true, downloads: 0 },
    });
    expect(second.rampart.stats().sync.failures).toBeGreaterThanOrEqual(1);
    // The swap from disk is bounded in time like one from the hub.
    const { lastSwapStartedAt, lastSwapAt } = second.rampart.stats().sync;
    expect(lastSwapStartedAt).toBeGreaterThanOrEqual(started);
    expect(lastSwapAt).toBeGreaterThanOrEqual(lastSwapStartedAt as number);
    expect(second.logger.lines.join('\n')).toMatch(
      /snapshot sync failed .*cannot reach the hub.*keeping snapshot version 1/,
    );
  });

  it('ignores a snapshot on disk written under another site key', async () => {
    const hub = await hubWith(V1);
    const { dir, remove } = temporaryDirectory();
    cleanup.push(remove);
    const first = testClient({ hubUrl: hub.url, dataDir: dir });
    await first.rampart.ready();
    await first.close();
    await hub.close();
    const other = client({
      hubUrl: hub.url,
      dataDir: dir,
      siteKey: 'rk_another_site_key_0123456789',
    });
    await other.rampart.ready();
    expect(other.rampart.stats()).toMatchObject({
      snapshotVersion: null,
      sync: { loadedFromDisk: false },
    });
    expect(other.logger.lines.join('\n')).toContain('written for another site key');
  });

  it('starts with no snapshot when the hub is down and nothing is on disk, and recovers when it is back', async () => {
    const probe = await startFakeHub(SITE_KEY, V1);
    const port = Number(new URL(probe.url).port);
    await probe.close(); // a port nobody listens on now
    const c = client({ hubUrl: probe.url, syncIntervalMs: 100, syncBackoffMaxMs: 300 });
    await c.rampart.ready();
    expect(c.rampart.stats().snapshotVersion).toBeNull();
    expect(c.rampart.stats().sync.failures).toBeGreaterThanOrEqual(1);
    await hubWith(V1, port);
    await eventually('version 1', () => c.rampart.stats().snapshotVersion === 1);
    await eventually('the recovery logged', () =>
      c.logger.lines.some((l) => /sync recovered after \d+ failed attempt/.test(l)),
    );
  });

  it('keeps its snapshot and backs off while the hub is down mid-run', async () => {
    const hub = await hubWith(V1);
    const port = Number(new URL(hub.url).port);
    const c = client({ hubUrl: hub.url, syncIntervalMs: 100, syncBackoffMaxMs: 1600 });
    await c.rampart.ready();
    await hub.close();
    const app = await startApp(c.rampart);
    cleanup.push(() => app.close());
    await new Promise((r) => setTimeout(r, 2500));
    const stats = c.rampart.stats();
    // without backoff, 2.5 s at a 100 ms interval would be ~25 polls
    expect(stats.sync.failures).toBeGreaterThanOrEqual(2);
    expect(stats.sync.failures).toBeLessThan(15);
    expect(stats.snapshotVersion).toBe(1);
    expect((await call(app.port, '/wp-admin')).status).toBe(403);
    // the failure is logged once per minute, not once per attempt
    expect(c.logger.lines.filter((l) => l.includes('snapshot sync failed')).length).toBe(1);
    const back = await hubWith(V2, port);
    await eventually(
      'version 2 after the outage',
      () => c.rampart.stats().snapshotVersion === 2,
      15_000,
    );
    expect(back.requests.length).toBeGreaterThanOrEqual(1);
  });

  it('stops syncing on 401 and logs it once, without the key', async () => {
    const hub = await hubWith(V1);
    const c = client({
      hubUrl: hub.url,
      siteKey: 'rk_wrong_key_that_must_never_be_logged',
      syncIntervalMs: 100,
    });
    await c.rampart.ready();
    await new Promise((r) => setTimeout(r, 500));
    expect(hub.requests.length).toBe(1);
    const stats = c.rampart.stats();
    expect(stats.sync).toMatchObject({ unauthorized: true, failures: 1 });
    const log = c.logger.lines.join('\n');
    expect(log.match(/refused the site key/g)).toHaveLength(1);
    expect(log).not.toContain('rk_wrong_key_that_must_never_be_logged');
  });

  it('shares one downloaded file between processes on one data directory', async () => {
    const hub = await hubWith(V1);
    const { dir, remove } = temporaryDirectory();
    cleanup.push(remove);
    // a polls only when nudged by a request (no blocking polls); b polls on its own
    const a = client({
      hubUrl: hub.url,
      dataDir: dir,
      syncEveryRequests: 1,
      syncWaitMs: 0,
      keepDataDir: true,
    });
    await a.rampart.ready();
    // b starts later: it opens a's file at once and the hub answers 304
    const b = client({ hubUrl: hub.url, dataDir: dir, syncIntervalMs: 100, keepDataDir: true });
    await b.rampart.ready();
    expect(b.rampart.stats()).toMatchObject({
      snapshotVersion: 1,
      sync: { loadedFromDisk: true, downloads: 0, failures: 0 },
    });
    // a new version: b downloads it, a finds the file and does not read the hub's body
    hub.snapshot = V2;
    await eventually('b on version 2', () => b.rampart.stats().snapshotVersion === 2);
    const app = await startApp(a.rampart);
    cleanup.push(() => app.close());
    await new Promise((r) => setTimeout(r, 1000)); // nudges are at least 1 s apart
    await call(app.port, '/');
    await eventually('a on version 2', () => a.rampart.stats().snapshotVersion === 2);
    expect(a.rampart.stats().sync).toMatchObject({ downloads: 1, reused: 1 });
    expect(b.rampart.stats().sync).toMatchObject({ downloads: 1, reused: 0 });
    expect(files(dir)).toEqual([`${V1.sha256}.sqlite`, `${V2.sha256}.sqlite`].sort());
  });

  it('removes temporary files of dead processes and old ones at start, keeps live fresh ones', async () => {
    const hub = await hubWith(V1);
    const { dir, remove } = temporaryDirectory();
    cleanup.push(remove);
    const first = testClient({ hubUrl: hub.url, dataDir: dir });
    await first.rampart.ready();
    await first.close();
    const host = (await import('node:os')).hostname().replace(/~/g, '_');
    const snapshots = join(dir, 'snapshots');
    const dead = join(snapshots, `.tmp~${host}~999999~aaaa.part`);
    const live = join(snapshots, `.tmp~${host}~1~bbbb.part`); // pid 1 exists
    const oldLive = join(snapshots, `.tmp~${host}~1~cccc.part`);
    const otherHost = join(snapshots, '.tmp~elsewhere~5~dddd.part');
    for (const path of [dead, live, oldLive, otherHost]) writeFileSync(path, 'partial');
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(oldLive, old, old);
    const c = client({ hubUrl: hub.url, dataDir: dir });
    await c.rampart.ready();
    expect([dead, live, oldLive, otherHost].map(existsSync)).toEqual([false, true, false, true]);
  });

  it('keeps the current snapshot and the three newest others', async () => {
    const hub = await hubWith(V1);
    const c = client({ hubUrl: hub.url, syncIntervalMs: 100 });
    await c.rampart.ready();
    const versions = [V1];
    for (let v = 2; v <= 6; v++) {
      const snapshot = buildSnapshot(
        [{ id: `r${v}`, type: 'ip', action: 'block', ranges: [`192.0.2.${v}`] }],
        v,
      );
      versions.push(snapshot);
      hub.snapshot = snapshot;
      await eventually(`version ${v}`, () => c.rampart.stats().snapshotVersion === v);
    }
    const expected = versions
      .slice(2)
      .map((s) => `${s.sha256}.sqlite`)
      .sort();
    await eventually('old files pruned', () => files(c.dataDir).join() === expected.join());
  });

  it('never uses a half-downloaded file after the process is SIGKILLed mid-download', async () => {
    const childScript = fileURLToPath(new URL('../test-support/sync-child.mjs', import.meta.url));
    const dist = fileURLToPath(new URL('../../dist/rampart.js', import.meta.url));
    expect(existsSync(dist), `${dist} missing: build the package first (turbo run build)`).toBe(
      true,
    );
    const hub = await hubWith(V1);
    const { dir, remove } = temporaryDirectory();
    cleanup.push(remove);
    const first = testClient({ hubUrl: hub.url, dataDir: dir });
    await first.rampart.ready();
    await first.close();

    hub.snapshot = V2;
    hub.misbehave = { kind: 'stall', bytes: Math.floor(V2.bytes.length / 2) };
    const child = spawn(process.execPath, [childScript, hub.url, SITE_KEY, dir], {
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanup.push(() => child.kill('SIGKILL'));
    await hub.stalled();
    const partial = await eventually('a partial file on disk', () =>
      files(dir).find(
        (name) => name.startsWith('.tmp~') && readFileSync(join(dir, 'snapshots', name)).length > 0,
      ),
    );
    child.kill('SIGKILL');
    await exited;
    expect(files(dir)).toEqual([`${V1.sha256}.sqlite`, partial].sort());

    hub.misbehave = { kind: 'status', status: 503 };
    const c = client({ hubUrl: hub.url, dataDir: dir });
    await c.rampart.ready();
    expect(c.rampart.stats()).toMatchObject({ snapshotVersion: 1, sync: { loadedFromDisk: true } });
    expect(files(dir)).toEqual([`${V1.sha256}.sqlite`]); // the dead process's temporary is gone
    expect(c.logger.lines.join('\n')).toContain('removed abandoned temporary file');
  });
});
