/**
 * Where ingested reports go, and the questions the dashboard asks of them. Both databases, through
 * the hub's Kysely layer for every read.
 *
 * A batch is written in one transaction, and only if its id was not seen before: a batch the
 * client retried (after a timeout, say) is never counted twice. Batches handed over while a
 * write is in progress (the workers ingest up to `HUB_INGEST_CONCURRENCY` at once) wait and are
 * written together, in the next transaction: the database sees one commit and one set of
 * statements per group instead of per batch (`report-group.ts` says what a group writes). Each
 * `ingest` still resolves only once its batch is committed; a group the database refuses is
 * tried again batch by batch, so one bad batch fails alone. On SQLite the groups are written on
 * a thread of their own (`sqlite-report-writer.ts`); on PostgreSQL through Kysely.
 */
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { CompiledQuery } from 'kysely';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { EventSample } from './event-sample.js';
import type { ReportBatch } from './report-batch.js';
import { type GroupEntry, minuteOf, writeReportGroup } from './report-group.js';
import { SqliteReportWriter } from './sqlite-report-writer.js';

/** Country code and AS number of a client address, where the site's datasets know them. */
export interface AddressLabels {
  readonly country: string | null;
  readonly asn: number | null;
}

export type Labeler = (ip: string) => AddressLabels;

/** The dimensions of `traffic_top`. */
export const DIMENSIONS = ['ip', 'country', 'asn', 'path', 'rule', 'user_agent'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** How the dashboard groups outcomes. */
export type TrafficClass =
  | 'allowed'
  | 'passed'
  | 'blocked'
  | 'rate_limited'
  | 'monitored'
  | 'unevaluated';

export interface TrafficMinute {
  readonly minute: string;
  readonly allowed: number;
  readonly passed: number;
  readonly blocked: number;
  readonly rate_limited: number;
  readonly monitored: number;
  readonly unevaluated: number;
}

export interface TopEntry {
  readonly value: string;
  readonly count: number;
}

export interface EventView {
  readonly time: string;
  readonly requestId: string;
  readonly instance: string;
  readonly ip: string;
  readonly country: string | null;
  readonly asn: number | null;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly userAgent: string;
  readonly action: string;
  readonly mode: string;
  readonly outcome: string;
  readonly ruleId: string | null;
  readonly category: string | null;
  readonly monitoredRuleId: string | null;
  readonly snapshotVersion: number | null;
  readonly sampled: boolean;
  /** The request's trace id when the app traced it (see `GET .../traces/:traceId`). */
  readonly traceId: string | null;
}

export interface EventFilter {
  readonly outcome?: string;
  readonly action?: string;
  readonly mode?: string;
  readonly ruleId?: string;
  readonly ip?: string;
  readonly before?: string;
  readonly limit: number;
}

/**
 * A group closes at this many batches or events: it bounds how long one write holds the
 * database's write lock (about 0.1 s at the bound on SQLite).
 */
const GROUP_BATCHES = 64;
const GROUP_EVENTS = 8000;
/** The last minute that starts before `to` (exclusive end of a window). */
export function lastMinuteBefore(to: string): string {
  return minuteOf(new Date(Date.parse(to) - 1).toISOString());
}

/** The dashboard's class of a count or event. */
export function trafficClass(action: string, mode: string, outcome: string): TrafficClass {
  if (outcome === 'blocked') return 'blocked';
  if (outcome === 'rate_limited') return 'rate_limited';
  if (outcome === 'failed_open' || outcome === 'failed_closed') return 'unevaluated';
  if (mode === 'monitor' && (action === 'block' || action === 'rate_limit')) return 'monitored';
  return action === 'allow' ? 'allowed' : 'passed';
}

/** A batch handed to {@link ReportStore.ingest}, waiting for its group's transaction. */
interface Waiting {
  readonly siteId: string;
  readonly batch: ReportBatch;
  readonly label: Labeler;
  readonly resolve: (stored: boolean) => void;
  readonly reject: (error: unknown) => void;
}

@Injectable()
export class ReportStore implements OnModuleDestroy {
  private readonly waiting: Waiting[] = [];
  /** Whether a group is being written (one at a time: the next forms meanwhile). */
  private writing = false;
  /** SQLite's writer thread (undefined on PostgreSQL). */
  private readonly sqlite: SqliteReportWriter | undefined;
  /** PostgreSQL's budget of raw events (SQLite's writer thread keeps its own). */
  private readonly sample: EventSample;

  constructor(
    private readonly database: DatabaseService,
    @Inject(HUB_CONFIG) config: Pick<HubConfig, 'eventSamplePerSecond'>,
  ) {
    const eventsPerSecond = config.eventSamplePerSecond;
    this.sample = new EventSample(eventsPerSecond);
    this.sqlite =
      database.sqliteFile === undefined
        ? undefined
        : new SqliteReportWriter({ file: database.sqliteFile, eventsPerSecond });
  }

  /** Ends SQLite's writer thread, once what it was handed is written. */
  async onModuleDestroy(): Promise<void> {
    await this.sqlite?.close();
  }

  /**
   * Writes the batch unless its id was seen before; resolves, once it is committed, whether it
   * was new. Batches that arrive while a write is in progress are written together in the next.
   */
  ingest(siteId: string, batch: ReportBatch, label: Labeler): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ siteId, batch, label, resolve, reject });
      if (this.writing) return;
      this.writing = true;
      // After the current turn's I/O, so that batches whose jobs arrived with it join the group.
      setImmediate(() => void this.writeWaiting());
    });
  }

  private async writeWaiting(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        let events = 0;
        let n = 0;
        while (n < this.waiting.length && n < GROUP_BATCHES && events < GROUP_EVENTS)
          events += (this.waiting[n++] as Waiting).batch.events.length;
        await this.writeGroup(this.waiting.splice(0, n));
        if (this.waiting.length > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.writing = false;
    }
  }

  /** Settles every batch of `group`; never throws. */
  private async writeGroup(group: readonly Waiting[]): Promise<void> {
    try {
      const stored = await this.write(group);
      group.forEach((w, i) => {
        w.resolve(stored[i] as boolean);
      });
    } catch (error) {
      if (group.length === 1) {
        group[0]?.reject(error);
        return;
      }
      // Alone, a batch the database refuses (or a database that went away) fails only itself.
      for (const w of group) {
        try {
          w.resolve((await this.write([w]))[0] as boolean);
        } catch (alone) {
          w.reject(alone);
        }
      }
    }
  }

  /** One transaction for `group`; resolves, per batch, whether it was new. */
  private write(group: readonly Waiting[]): Promise<boolean[]> {
    const receivedAt = new Date().toISOString();
    const entries: GroupEntry[] = group.map(({ siteId, batch, label }) => ({
      siteId,
      batch,
      labels: batch.events.map((e) => label(e.ip)),
    }));
    if (this.sqlite) return this.sqlite.write(entries, receivedAt);
    return this.database.db
      .transaction()
      .execute((tx) =>
        writeReportGroup(
          'postgres',
          async <R>(sql: string, parameters: readonly unknown[]) => [
            ...(await tx.executeQuery<R>(CompiledQuery.raw(sql, [...parameters]))).rows,
          ],
          entries,
          receivedAt,
          this.sample,
        ),
      );
  }

  /** Requests per minute by class, oldest first, for `[from, to)` (ISO times). */
  async traffic(siteId: string, from: string, to: string): Promise<TrafficMinute[]> {
    const rows = await this.database.db
      .selectFrom('traffic_minutes')
      .select(['minute', 'action', 'mode', 'outcome', (e) => e.fn.sum<number>('count').as('count')])
      .where('site_id', '=', siteId)
      .where('minute', '>=', minuteOf(from))
      .where('minute', '<=', lastMinuteBefore(to))
      .groupBy(['minute', 'action', 'mode', 'outcome'])
      .orderBy('minute')
      .execute();
    const byMinute = new Map<string, Record<TrafficClass, number>>();
    for (const r of rows) {
      let minute = byMinute.get(r.minute);
      if (!minute) {
        minute = {
          allowed: 0,
          passed: 0,
          blocked: 0,
          rate_limited: 0,
          monitored: 0,
          unevaluated: 0,
        };
        byMinute.set(r.minute, minute);
      }
      minute[trafficClass(r.action, r.mode, r.outcome)] += Number(r.count);
    }
    return [...byMinute].map(([minute, counts]) => ({ minute, ...counts }));
  }

  /** The most frequent values of `dimension` over `[from, to)`, optionally for one outcome. */
  async top(
    siteId: string,
    dimension: Dimension,
    from: string,
    to: string,
    outcome: string | undefined,
    limit: number,
  ): Promise<TopEntry[]> {
    let query = this.database.db
      .selectFrom('traffic_top')
      .select(['value', (e) => e.fn.sum<number>('count').as('count')])
      .where('site_id', '=', siteId)
      .where('dimension', '=', dimension)
      .where('minute', '>=', minuteOf(from))
      .where('minute', '<=', lastMinuteBefore(to));
    if (outcome) query = query.where('outcome', '=', outcome);
    const rows = await query
      .groupBy('value')
      .orderBy('count', 'desc')
      .orderBy('value')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ value: r.value, count: Number(r.count) }));
  }

  /** Signals per minute and kind over `[from, to)`. */
  async signals(
    siteId: string,
    from: string,
    to: string,
  ): Promise<{ minute: string; kind: string; count: number }[]> {
    const rows = await this.database.db
      .selectFrom('signal_minutes')
      .select(['minute', 'kind', 'count'])
      .where('site_id', '=', siteId)
      .where('minute', '>=', minuteOf(from))
      .where('minute', '<=', lastMinuteBefore(to))
      .orderBy('minute')
      .orderBy('kind')
      .execute();
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  }

  /** Whether an event of `siteId` names the trace `traceId`. */
  async hasTrace(siteId: string, traceId: string): Promise<boolean> {
    const row = await this.database.db
      .selectFrom('report_events')
      .select('site_id')
      .where('site_id', '=', siteId)
      .where('trace_id', '=', traceId)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Recent events, newest first. */
  async events(siteId: string, filter: EventFilter): Promise<EventView[]> {
    let query = this.database.db
      .selectFrom('report_events')
      .selectAll()
      .where('site_id', '=', siteId);
    if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
    if (filter.action) query = query.where('action', '=', filter.action);
    if (filter.mode) query = query.where('mode', '=', filter.mode);
    if (filter.ruleId) query = query.where('rule_id', '=', filter.ruleId);
    if (filter.ip) query = query.where('ip', '=', filter.ip);
    if (filter.before) query = query.where('time', '<', filter.before);
    const rows = await query.orderBy('time', 'desc').limit(filter.limit).execute();
    return rows.map((r) => ({
      time: r.time,
      requestId: r.request_id,
      instance: r.instance,
      ip: r.ip,
      country: r.country,
      asn: r.asn === null ? null : Number(r.asn),
      method: r.method,
      host: r.host,
      path: r.path,
      userAgent: r.user_agent,
      action: r.action,
      mode: r.mode,
      outcome: r.outcome,
      ruleId: r.rule_id,
      category: r.category,
      monitoredRuleId: r.monitored_rule_id,
      snapshotVersion: r.snapshot_version === null ? null : Number(r.snapshot_version),
      sampled: Number(r.sampled) === 1,
      traceId: r.trace_id,
    }));
  }
}
