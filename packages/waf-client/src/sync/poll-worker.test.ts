import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSnapshot } from '@rampart/rules-core/snapshot/reader';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import { SITE_KEY } from '../test-support/harness.js';
import { buildSnapshot, temporaryDirectory } from '../test-support/snapshots.js';
import { PollWorker } from './poll-worker.js';
import { DownloadError, type PollRequest } from './snapshot-download.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(): Promise<{ hub: FakeHub; worker: PollWorker; dataDir: string }> {
  const hub = await startFakeHub(SITE_KEY, buildSnapshot([], 3));
  cleanup.push(() => hub.close());
  const tmp = temporaryDirectory();
  cleanup.push(() => tmp.remove());
  mkdirSync(join(tmp.dir, 'snapshots'));
  const worker = new PollWorker(tmp.dir);
  cleanup.push(() => worker.close());
  return { hub, worker, dataDir: tmp.dir };
}

function request(hub: FakeHub, signal = new AbortController().signal): PollRequest {
  return {
    hubUrl: hub.url,
    siteKey: SITE_KEY,
    instanceId: 'test-1',
    current: null,
    idleTimeoutMs: 5000,
    userAgent: 'test',
    waitMs: 0,
    lookup: true,
    deltas: true,
    fleetSize: null,
    signal,
  };
}

describe('PollWorker', () => {
  it('downloads into the data directory, verified against the announced hash', async () => {
    const { hub, worker, dataDir } = await setup();
    const result = await worker.poll(request(hub));
    expect(result).toMatchObject({ kind: 'downloaded', version: 3 });
    if (result.kind !== 'downloaded') return;
    expect(result.tempPath.startsWith(join(dataDir, 'snapshots'))).toBe(true);
    expect(readFileSync(result.tempPath).equals(hub.snapshot?.bytes as Buffer)).toBe(true);
  });

  it('passes a download error back as a DownloadError', async () => {
    const { hub, worker } = await setup();
    hub.misbehave = { kind: 'truncate', bytes: 100 };
    await expect(worker.poll(request(hub))).rejects.toBeInstanceOf(DownloadError);
    hub.misbehave = { kind: 'none' };
    await expect(worker.poll(request(hub))).resolves.toMatchObject({ kind: 'downloaded' });
  });

  it('aborts a stalled download when the signal fires', async () => {
    const { hub, worker } = await setup();
    hub.misbehave = { kind: 'stall', bytes: 100 };
    const controller = new AbortController();
    const polled = worker.poll(request(hub, controller.signal));
    await hub.stalled();
    controller.abort();
    await expect(polled).rejects.toThrow(/sync stopped/);
  });

  it('fails the polls in flight when the worker is stopped, and starts a new one after', async () => {
    const { hub, worker } = await setup();
    hub.misbehave = { kind: 'stall', bytes: 100 };
    const polled = worker.poll(request(hub));
    await hub.stalled();
    await worker.close();
    await expect(polled).rejects.toThrow(/poll worker exited/);
    hub.misbehave = { kind: 'none' };
    await expect(worker.poll(request(hub))).resolves.toMatchObject({ kind: 'downloaded' });
  });

  it('runs the integrity check of a snapshot file on its thread', async () => {
    const { hub, worker, dataDir } = await setup();
    const bytes = hub.snapshot?.bytes ?? Buffer.alloc(0);
    const good = join(dataDir, 'good.sqlite');
    writeFileSync(good, bytes);
    await expect(worker.quickCheck(good)).resolves.toBe('ok');
    // The last pages cut off: SQLite's header still promises them.
    const cut = join(dataDir, 'cut.sqlite');
    writeFileSync(cut, bytes.subarray(0, 4096 * 2));
    await expect(worker.quickCheck(cut)).resolves.not.toBe('ok');
    await expect(worker.quickCheck(join(dataDir, 'missing.sqlite'))).resolves.toMatch(
      /unable to open|does not exist/,
    );
    // Checks and polls share the thread and each gets its own answer.
    const [checked, polled] = await Promise.all([
      worker.quickCheck(good),
      worker.poll(request(hub)),
    ]);
    expect(checked).toBe('ok');
    expect(polled).toMatchObject({ kind: 'downloaded' });
  });

  it('reads range tables on its thread and hands them over transferred', async () => {
    const { worker, dataDir } = await setup();
    const rules = [
      { id: 'office', type: 'ip', action: 'allow', ranges: ['203.0.113.0/24', '2001:db8::/48'] },
    ];
    const file = join(dataDir, 'rules.sqlite');
    writeFileSync(file, buildSnapshot(rules, 4).bytes);
    const here = await openSnapshot(file);
    const tables = await worker.loadTables(file, ['ip', 'asn']);
    expect(Object.keys(tables)).toEqual(['ip', 'asn']);
    expect(tables.ip).toEqual(here.tables.ip);
    expect(tables.asn).toEqual(here.tables.asn);
    here.close();
    // A file it cannot read: the worker's reason, and the worker still serves.
    await expect(worker.loadTables(join(dataDir, 'missing.sqlite'), ['ip'])).rejects.toThrow(
      /unable to open|does not exist/,
    );
    await expect(worker.quickCheck(file)).resolves.toBe('ok');
  });
});
