/**
 * The store's grouping on each database: batches handed over together are written in one
 * transaction yet each counted once and exactly, a copy in the same group is not counted, and a
 * batch the database refuses fails alone.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedPostgres } from '@rampart/test-services/postgres-server';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import type { ReportBatch, ReportEvent } from './report-batch.js';
import { type Labeler, ReportStore } from './report-store.js';

const postgres = sharedPostgres('report_store');
afterAll(() => postgres.stop());

const HOUR = 3_600_000;
/** The raw events kept per site and second in these tests. */
const SAMPLE_PER_SECOND = 100;
const label: Labeler = (ip) => ({
  country: ip.startsWith('203.') ? 'FR' : null,
  asn: ip.startsWith('203.') ? 64500 : null,
});

function event(ip: string, overrides: Partial<ReportEvent> = {}): ReportEvent {
  return {
    requestId: randomUUID(),
    time: new Date().toISOString(),
    ip,
    method: 'GET',
    host: 'shop.example',
    path: '/wp-login.php',
    userAgent: 'curl/8.5.0',
    action: 'block',
    mode: 'enforce',
    outcome: 'blocked',
    ruleId: 'wp',
    category: 'pattern',
    monitoredRuleId: null,
    snapshotVersion: 1,
    sampled: false,
    traceparent: null,
    ...overrides,
  };
}

/** `blocked` blocked events from `ip`, one sampled passed event, and the counts they stand for. */
function batch(ip: string, blocked: number): ReportBatch {
  const now = new Date().toISOString();
  return {
    version: 1,
    batchId: randomUUID(),
    instance: 'web-1',
    snapshotVersion: 1,
    periodStart: now,
    periodEnd: now,
    passSampleRate: 0.1,
    dropped: 0,
    counts: [
      { action: 'block', mode: 'enforce', ruleId: 'wp', outcome: 'blocked', count: blocked },
      { action: 'pass', mode: 'enforce', ruleId: null, outcome: 'passed', count: 10 },
    ],
    events: [
      ...Array.from({ length: blocked }, () => event(ip)),
      event(ip, { action: 'pass', outcome: 'passed', ruleId: null, category: null, sampled: true }),
    ],
    signals: [
      {
        kind: 'login_failed',
        requestId: randomUUID(),
        time: now,
        ip,
        path: '/login',
        userAgent: 'curl/8.5.0',
        account: null,
      },
    ],
    rateLimitKeys: [],
    addressCounts: [],
  };
}

describe.each(['sqlite', 'postgres'] as const)('report store on %s', (kind) => {
  let dataDir: string;
  let database: DatabaseService;
  let store: ReportStore;
  const window = () =>
    [new Date(Date.now() - HOUR).toISOString(), new Date(Date.now() + HOUR).toISOString()] as const;
  const blocked = async () =>
    (await store.traffic('shop', ...window())).reduce((n, m) => n + m.blocked, 0);

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'report-store-'));
    const databaseUrl = kind === 'postgres' ? await postgres.freshDatabase() : undefined;
    database = new DatabaseService({ databaseUrl, dataDir } as HubConfig);
    await database.onModuleInit();
    await database.db
      .insertInto('sites')
      .values({
        id: 'shop',
        name: 'shop',
        created_at: new Date().toISOString(),
        rules_revision: 0,
        built_revision: 0,
        failed_revision: 0,
      })
      .execute();
    store = new ReportStore(database, { eventSamplePerSecond: SAMPLE_PER_SECOND });
  });
  afterEach(async () => {
    await store.onModuleDestroy();
    await database.onModuleDestroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes batches handed over together once each, exactly, and a copy among them not at all', async () => {
    const batches = Array.from({ length: 12 }, (_, i) => batch(`203.0.113.${i % 3}`, i + 1));
    const copy = batches[0] as ReportBatch;
    const stored = await Promise.all([...batches, copy].map((b) => store.ingest('shop', b, label)));
    expect(stored).toEqual([...batches.map(() => true), false]);
    expect(await blocked()).toBe((12 * 13) / 2);
    const [from, to] = window();
    const ips = await store.top('shop', 'ip', from, to, undefined, 10);
    // Addresses .0, .1, .2 get batches 1+4+7+10, 2+5+8+11, 3+6+9+12 blocked events, plus
    // 4 sampled passed events each worth 1 / passSampleRate = 10.
    expect(ips).toEqual([
      { value: '203.0.113.2', count: 30 + 40 },
      { value: '203.0.113.1', count: 26 + 40 },
      { value: '203.0.113.0', count: 22 + 40 },
    ]);
    const countries = await store.top('shop', 'country', from, to, 'blocked', 10);
    expect(countries).toEqual([{ value: 'FR', count: 78 }]);
    expect((await store.signals('shop', from, to)).map((s) => s.count)).toEqual([12]);
    const events = await store.events('shop', { limit: 500 });
    expect(events).toHaveLength(78 + 12);
    expect(events[0]).toMatchObject({ country: 'FR', asn: 64500, snapshotVersion: 1 });
    expect(await store.ingest('shop', copy, label)).toBe(false);
    expect(await blocked()).toBe(78);
  });

  it('keeps at most its budget of raw events per site and second, and counts every event', async () => {
    // Whole seconds fixed once: read from the clock per event, a burst could straddle two.
    const now = Math.floor(Date.now() / 1000) * 1000;
    const second = (ago: number) => new Date(now - ago * 1000 + 500).toISOString();
    const burst = batch('203.0.113.9', 0);
    const events = [
      ...Array.from({ length: SAMPLE_PER_SECOND + 20 }, () =>
        event('203.0.113.9', { time: second(5) }),
      ),
      ...Array.from({ length: 7 }, () => event('203.0.113.9', { time: second(4) })),
    ];
    const counts = [{ ...burst.counts[0], count: events.length } as ReportBatch['counts'][number]];
    expect(await store.ingest('shop', { ...burst, counts, events }, label)).toBe(true);
    // A later batch finds the first second's budget spent.
    const late = {
      ...batch('203.0.113.9', 0),
      counts: [{ ...counts[0], count: 1 }],
    } as ReportBatch;
    const lateEvents = [event('203.0.113.9', { time: second(5) })];
    expect(await store.ingest('shop', { ...late, events: lateEvents }, label)).toBe(true);
    expect(await blocked()).toBe(events.length + 1);
    const [from, to] = window();
    expect(await store.top('shop', 'ip', from, to, 'blocked', 1)).toEqual([
      { value: '203.0.113.9', count: events.length + 1 },
    ]);
    expect(await store.events('shop', { limit: 500 })).toHaveLength(SAMPLE_PER_SECOND + 7);
  });

  it('fails only the batch the database refuses when it was grouped with others', async () => {
    const good = [batch('198.51.100.1', 2), batch('198.51.100.2', 3)];
    const results = await Promise.allSettled([
      store.ingest('shop', good[0] as ReportBatch, label),
      store.ingest('no-such-site', batch('198.51.100.3', 5), label),
      store.ingest('shop', good[1] as ReportBatch, label),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await blocked()).toBe(5);
  });
});
