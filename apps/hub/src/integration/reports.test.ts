/**
 * Report ingestion against the real hub, Redis and each database: batches accepted (gzip or not)
 * once durably queued, aggregated per minute into exact counters, top lists with the country of
 * each address, and a sample of raw events; a retried batch counted once; malformed, oversized,
 * mis-typed and mis-encoded batches refused whole with the field and the reason; backpressure
 * when the queue is full; retention of raw events by count.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';
import { blockedEvent } from '../test-support/report-batches.js';

afterAll(() => stopPostgres());

const now = () => new Date().toISOString();

const event = blockedEvent;

function batch(overrides: Record<string, unknown> = {}) {
  return {
    version: 1,
    batchId: randomUUID(),
    instance: 'web-1:42',
    snapshotVersion: 1,
    periodStart: new Date(Date.now() - 5000).toISOString(),
    periodEnd: now(),
    passSampleRate: 0.1,
    dropped: 0,
    counts: [
      { action: 'block', mode: 'enforce', ruleId: 'wp', outcome: 'blocked', count: 3 },
      { action: 'pass', mode: 'enforce', ruleId: null, outcome: 'passed', count: 97 },
    ],
    events: [
      event(),
      event({ ip: '198.51.100.7' }),
      event(),
      event({
        action: 'pass',
        outcome: 'passed',
        ruleId: null,
        category: null,
        path: '/',
        userAgent: 'Mozilla/5.0',
        sampled: true,
      }),
    ],
    ...overrides,
  };
}

describe.each(DATABASE_KINDS)('report ingestion on %s', (kind) => {
  let stack: HubStack;
  let key: string;
  const c = () => stack.client;

  const post = (
    body: unknown,
    headers: Record<string, string> = {},
    token: string | null = key,
  ) => {
    const raw = Buffer.isBuffer(body) ? body : gzipSync(JSON.stringify(body));
    return fetch(`${stack.hub.url}/v1/reports`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...headers,
      },
      body: raw,
    });
  };

  const traffic = async () =>
    (
      await c().admin<{ minutes: { blocked: number; passed: number }[] }>(
        'GET',
        '/v1/sites/shop/traffic',
      )
    ).body.minutes;
  const totals = async () => {
    const minutes = await traffic();
    return {
      blocked: minutes.reduce((n, m) => n + m.blocked, 0),
      passed: minutes.reduce((n, m) => n + m.passed, 0),
    };
  };

  beforeAll(async () => {
    stack = await startStack(kind, {
      env: {
        HUB_MAX_JSON_BYTES: String(256 * 1024),
        HUB_EVENT_RETENTION_COUNT: '20',
        HUB_RETENTION_INTERVAL_MS: '500',
      },
    });
    ({ key } = await c().createSite('Shop', 'shop'));
    const upload = await c().admin('PUT', '/v1/datasets/country/geo', undefined, {
      raw: '203.0.113.0,203.0.113.255,FR\n198.51.100.0,198.51.100.255,DE\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(upload.status, upload.text).toBeLessThan(300);
    await c().admin('POST', '/v1/sites/shop/rules', {
      id: 'wp',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    });
    await c().waitForVersion('shop', 1);
  });
  afterAll(() => stack?.stop());

  it('queues a valid batch (202), then counts it per minute, exactly', async () => {
    const answer = await post(batch());
    expect(answer.status).toBe(202);
    expect(await answer.json()).toMatchObject({ accepted: true });
    const seen = await waitFor('the batch ingested', async () => {
      const t = await totals();
      return t.blocked >= 3 ? t : undefined;
    });
    expect(seen).toEqual({ blocked: 3, passed: 97 }); // from counts, not from the sampled events
  });

  it('accepts an uncompressed batch too', async () => {
    const before = await totals();
    const answer = await post(Buffer.from(JSON.stringify(batch())), {
      'content-encoding': 'identity',
    });
    expect(answer.status).toBe(202);
    await waitFor('counted', async () =>
      (await totals()).blocked === before.blocked + 3 ? true : undefined,
    );
  });

  it('counts a retried batch once', async () => {
    const before = await totals();
    const once = batch();
    for (let i = 0; i < 3; i++) expect((await post(once)).status).toBe(202);
    const marker = batch(); // sent after the copies: once it is counted, so would they be
    expect((await post(marker)).status).toBe(202);
    await waitFor('the marker counted', async () =>
      (await totals()).blocked >= before.blocked + 6 ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await totals()).blocked).toBe(before.blocked + 6);
  });

  it('lists top addresses with their country, and the events with their request ids', async () => {
    const top = await c().admin<{ value: string; count: number }[]>(
      'GET',
      '/v1/sites/shop/traffic/top?dimension=ip&outcome=blocked',
    );
    expect(top.status).toBe(200);
    expect(top.body[0]).toMatchObject({ value: '203.0.113.9' });
    const countries = await c().admin<{ value: string }[]>(
      'GET',
      '/v1/sites/shop/traffic/top?dimension=country',
    );
    expect(countries.body.map((x) => x.value).sort()).toEqual(['DE', 'FR']);
    const events = await c().admin<
      { requestId: string; country: string | null; snapshotVersion: number }[]
    >('GET', '/v1/sites/shop/events?outcome=blocked&limit=5');
    expect(events.body).toHaveLength(5);
    expect(events.body[0]).toMatchObject({ snapshotVersion: 1 });
    expect(events.body.map((e) => e.country)).toContain('FR');
    const bad = await c().admin('GET', '/v1/sites/shop/traffic/top?dimension=planet');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('dimension must be one of');
  });

  it('refuses a malformed batch whole, naming each field, and stores nothing of it', async () => {
    const before = await totals();
    const broken = batch({
      batchId: 'x',
      events: [event(), event({ time: 'yesterday', outcome: 'vanished' })],
    });
    const answer = await post(broken);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    const body = (await answer.json()) as {
      status: number;
      detail: string;
      issues: { field: string; reason: string }[];
    };
    expect(body.status).toBe(400);
    expect(body.issues.map((i) => i.field)).toEqual([
      'batchId',
      'events[1].time',
      'events[1].outcome',
    ]);
    expect(body.detail).toMatch(/^batchId: must be 8-64 characters .* \(and 2 more\)$/);
    for (const [junk, why] of [
      [{ version: 2 }, 'version'],
      [[1, 2, 3], '(body)'],
    ] as const) {
      const refused = await post(junk);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(await refused.json())).toContain(why);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await totals()).toEqual(before);
  });

  it('refuses the wrong media type, an unknown encoding, a body too large and a missing key', async () => {
    expect((await post(batch(), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(batch(), { 'content-encoding': 'compress' })).status).toBe(415);
    const huge = batch({ events: Array.from({ length: 1500 }, () => event()) });
    expect((await post(huge)).status).toBe(413);
    expect((await post(batch(), {}, null)).status).toBe(401);
    expect((await post(batch(), {}, 'rk_not_a_key')).status).toBe(401);
  });

  it('keeps only the newest raw events (retention by count), while the counters stay', async () => {
    for (let i = 0; i < 3; i++)
      expect(
        (await post(batch({ events: Array.from({ length: 10 }, () => event()) }))).status,
      ).toBe(202);
    await waitFor('the raw events trimmed to 20', async () => {
      const events = await c().admin<unknown[]>('GET', '/v1/sites/shop/events?limit=500');
      return events.body.length === 20 ? true : undefined;
    });
    expect((await totals()).blocked).toBeGreaterThanOrEqual(3 * 3);
  });
});

describe('backpressure', () => {
  let stack: HubStack;
  let key: string;
  let queue: Queue;

  beforeAll(async () => {
    stack = await startStack('sqlite', { env: { HUB_REPORT_QUEUE_MAX: '1' } });
    ({ key } = await stack.client.createSite('Shop', 'shop'));
    // The hub's own ingestion queue, paused so that nothing drains it while the test fills it.
    queue = new Queue('report-ingest', { connection: { url: stack.redis.url }, prefix: 'rampart' });
  });
  afterAll(async () => {
    await queue?.close();
    await stack?.stop();
  });

  const post = () =>
    fetch(`${stack.hub.url}/v1/reports`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(batch()),
    });

  it('answers 503 with Retry-After once the queue holds its maximum, and accepts again once it drained', async () => {
    await queue.pause();
    expect((await post()).status).toBe(202);
    const refused = await post();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ status: 503 });
    await queue.resume();
    await waitFor('the queued batch ingested', async () => {
      const { body } = await stack.client.admin<{ minutes: { blocked: number }[] }>(
        'GET',
        '/v1/sites/shop/traffic',
      );
      return body.minutes.reduce((n, m) => n + m.blocked, 0) === 3 ? true : undefined;
    });
    await waitFor('a batch accepted again', async () =>
      (await post()).status === 202 ? true : undefined,
    );
  });
});
