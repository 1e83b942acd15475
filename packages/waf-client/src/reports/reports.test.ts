/**
 * Reports against a real HTTP receiver (the hub's ingestion comes in a later issue): batching by
 * size and by interval, the gzip JSON format, retries honouring Retry-After, exact counts while
 * passes are sampled and batches fail, drop counting under load with a small queue, 404 stopping
 * reporting, a hanging receiver never slowing requests, and the flush on shutdown.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';
import type { ReportBatch } from './report-flusher.js';
import { REPORT_TEXT_LIMITS } from './report-queue.js';

let hub: FakeHub;
beforeAll(async () => {
  hub = await startFakeHub(SITE_KEY, buildSnapshot(STANDARD_RULES, 5));
});
afterAll(() => hub.close());

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(
  options: Partial<RampartOptions>,
): Promise<{ client: TestClient; receiver: ReportReceiver }> {
  const receiver = await startReportReceiver();
  cleanup.push(() => receiver.close());
  const client = testClient({
    hubUrl: hub.url,
    reportUrl: receiver.url,
    passSampleRate: 0,
    ...options,
  });
  cleanup.push(() => client.close());
  await client.rampart.ready();
  return { client, receiver };
}

/** Drives the middleware in-process: `n` requests to `path`. */
function drive(client: TestClient, n: number, path: string, ip = '192.0.2.1'): void {
  for (let i = 0; i < n; i++)
    client.rampart.middleware(fakeRequest(path, ip), fakeResponse(), () => {});
}

const total = (batches: readonly ReportBatch[]) =>
  batches.flatMap((b) => b.counts).reduce((sum, c) => sum + c.count, 0);

describe('reports', () => {
  it('sends full batches at once, gzip JSON with the key, and the rest on close()', async () => {
    const { client, receiver } = await setup({ reportBatchSize: 10, instanceId: 'web-7' });
    drive(client, 25, '/wp-admin', '203.0.113.9');
    await eventually('two full batches', () => receiver.batches.length === 2);
    expect(receiver.batches.map((b) => b.events.length)).toEqual([10, 10]);
    expect(receiver.attempts[0]).toMatchObject({
      encoding: 'gzip',
      contentType: 'application/json',
      authorization: `Bearer ${SITE_KEY}`,
    });
    const batch = receiver.batches[0] as ReportBatch;
    expect(batch).toMatchObject({ version: 1, instance: 'web-7', snapshotVersion: 5, dropped: 0 });
    expect(batch.events[0]).toMatchObject({
      ip: '203.0.113.9',
      method: 'GET',
      host: 'shop.example',
      path: '/wp-admin',
      userAgent: 'Mozilla/5.0 (test)',
      action: 'block',
      mode: 'enforce',
      outcome: 'blocked',
      ruleId: 'wp',
      category: 'pattern',
      snapshotVersion: 5,
      sampled: false,
      traceparent: null, // no tracer provider in this process
    });
    expect(batch.events[0]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(batch.events[0]?.time ?? '')).toBeGreaterThan(Date.now() - 60_000);
    // the remaining 5 wait for the interval (60 s here) or shutdown
    await client.rampart.close();
    expect(receiver.batches.map((b) => b.events.length)).toEqual([10, 10, 5]);
    expect(total(receiver.batches)).toBe(25);
    expect(client.rampart.stats().reports).toMatchObject({
      queued: 25,
      sent: 25,
      dropped: 0,
      pending: 0,
      batchesSent: 3,
    });
  });

  it('keeps long paths, user agents and hosts cut to a bounded length', async () => {
    const { client, receiver } = await setup({ reportBatchSize: 1 });
    const req = fakeRequest(
      `/wp-admin/${'p'.repeat(20_000)}?q=${'x'.repeat(10)}`,
      '203.0.113.9',
      'GET',
      {
        'user-agent': `Agent/${'u'.repeat(20_000)}`,
        host: `${'h'.repeat(20_000)}.example`,
      },
    );
    client.rampart.middleware(req, fakeResponse(), () => {});
    await eventually('one batch', () => receiver.batches.length === 1);
    const event = receiver.batches[0]?.events[0];
    expect(event?.path).toBe(`/wp-admin/${'p'.repeat(REPORT_TEXT_LIMITS.path - 10)}`);
    expect(event?.userAgent).toHaveLength(REPORT_TEXT_LIMITS.userAgent);
    expect(event?.host).toHaveLength(REPORT_TEXT_LIMITS.host);
    expect(event).toMatchObject({ action: 'block', ruleId: 'wp' });
  });

  it('sends partial batches every interval, counts alone when nothing was sampled', async () => {
    const { client, receiver } = await setup({ reportIntervalMs: 200 });
    drive(client, 3, '/wp-admin');
    drive(client, 7, '/');
    await eventually('one batch', () => receiver.batches.length >= 1);
    expect(receiver.batches[0]?.events).toHaveLength(3);
    expect(receiver.batches[0]?.counts).toEqual(
      expect.arrayContaining([
        { action: 'block', mode: 'enforce', ruleId: 'wp', outcome: 'blocked', count: 3 },
        { action: 'pass', mode: 'enforce', ruleId: null, outcome: 'passed', count: 7 },
      ]),
    );
    drive(client, 4, '/');
    await eventually('a counts-only batch', () => receiver.batches.length >= 2);
    expect(receiver.batches[1]).toMatchObject({
      events: [],
      counts: [{ action: 'pass', count: 4 }],
    });
  });

  it('retries with backoff, honouring Retry-After on 503 and 429', async () => {
    const { client, receiver } = await setup({ reportIntervalMs: 100 });
    receiver.script.push(
      { status: 503, headers: { 'retry-after': '1' } },
      { status: 500 },
      { status: 429, headers: { 'retry-after': '1' } },
    );
    drive(client, 2, '/wp-admin');
    await eventually('delivery after three failures', () => receiver.batches.length >= 1, 15_000);
    const [a, b, c, d] = receiver.attempts.map((x) => x.at);
    expect((b as number) - (a as number)).toBeGreaterThanOrEqual(950); // Retry-After: 1
    expect((d as number) - (c as number)).toBeGreaterThanOrEqual(950);
    expect(receiver.attempts.map((x) => x.status).slice(0, 4)).toEqual([503, 500, 429, 200]);
    // One batch, one id, however often it was sent: the hub counts it once.
    const ids = new Set(receiver.attempts.slice(0, 4).map((x) => x.batchId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^[0-9a-f-]{36}$/);
    await eventually('the answer processed', () => client.rampart.stats().reports.sent === 2);
    expect(client.rampart.stats().reports).toMatchObject({ sent: 2, retries: 3, dropped: 0 });
  });

  it('keeps counts exact while passes are sampled and batches are given up', async () => {
    const { client, receiver } = await setup({
      reportIntervalMs: 100,
      passSampleRate: 0.1,
      reportMaxAttempts: 1,
    });
    receiver.script.push({ status: 500 }, { status: 500 }); // the first two batches are lost
    drive(client, 2000, '/');
    drive(client, 20, '/wp-admin');
    await eventually('two failed batches', () => receiver.attempts.length >= 2);
    drive(client, 1000, '/');
    await client.rampart.close();
    const stats = client.rampart.stats();
    expect(total(receiver.batches)).toBe(3020); // every request counted once, none lost
    const received = receiver.batches.flatMap((b) => b.events);
    const passes = received.filter((e) => e.action === 'pass');
    expect(passes.every((e) => e.sampled)).toBe(true);
    // lost events are counted as dropped; queued = sent + dropped when the queue never overflowed
    expect(stats.reports.queued).toBe(stats.reports.sent + stats.reports.dropped);
    expect(stats.reports.sent).toBe(received.length);
    // ~10% of 3000 passes sampled overall
    expect(stats.reports.queued - 20).toBeGreaterThan(200);
    expect(stats.reports.queued - 20).toBeLessThan(400);
  });

  it('counts drops under load with a small queue and a failing receiver', async () => {
    const { client, receiver } = await setup({
      reportBatchSize: 20,
      reportQueueSize: 50,
      reportMaxAttempts: 2,
      reportIntervalMs: 100,
      closeTimeoutMs: 10_000,
    });
    for (let i = 0; i < 6; i++) receiver.script.push({ status: 503 });
    const started = performance.now();
    for (let round = 0; round < 20; round++) {
      drive(client, 500, '/wp-admin', `198.18.${round}.1`);
      await new Promise((r) => setImmediate(r));
    }
    const elapsed = performance.now() - started;
    await client.rampart.close();
    const { reports } = client.rampart.stats();
    // 10 000 refusable requests: every one either delivered or counted as dropped
    expect(reports.sent + reports.dropped).toBe(10_000);
    expect(reports.dropped).toBeGreaterThan(9000);
    expect(reports.pending).toBe(0);
    expect(receiver.batches.reduce((n, b) => n + b.events.length, 0)).toBe(reports.sent);
    // the totals that arrived still account for every request, and the drops are announced
    expect(total(receiver.batches)).toBe(10_000);
    expect(receiver.batches.reduce((n, b) => n + b.dropped, 0)).toBe(reports.dropped);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('stops reporting on 404 (no ingestion on the hub yet): logged once, drops counted', async () => {
    const { client, receiver } = await setup({ reportIntervalMs: 100 });
    receiver.script.push({ status: 404 });
    drive(client, 3, '/wp-admin');
    await eventually(
      'reporting stopped',
      () => client.rampart.stats().reports.stoppedReason !== null,
    );
    drive(client, 5, '/wp-admin');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.attempts).toHaveLength(1);
    expect(client.rampart.stats().reports).toMatchObject({
      sent: 0,
      dropped: 8,
      stoppedReason: 'HTTP 404 from the report URL',
    });
    expect(client.logger.lines.filter((l) => l.includes('answered 404'))).toHaveLength(1);
  });

  it('never slows requests: a receiver that never answers, and close() still bounded', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer((socket) => void sockets.add(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/reports`;
    const client = testClient({
      hubUrl: hub.url,
      reportUrl: url,
      reportBatchSize: 5,
      closeTimeoutMs: 500,
    });
    cleanup.push(() => client.close());
    await client.rampart.ready();
    const started = performance.now();
    drive(client, 1000, '/wp-admin');
    const perRequestMs = (performance.now() - started) / 1000;
    expect(perRequestMs).toBeLessThan(1);
    const closing = performance.now();
    await client.rampart.close();
    expect(performance.now() - closing).toBeLessThan(2000);
    await client.rampart.close(); // idempotent
    const { reports } = client.rampart.stats();
    expect(reports.sent).toBe(0);
    expect(reports.dropped).toBe(1000);
  });
});
