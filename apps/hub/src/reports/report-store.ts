/**
 * Where ingested reports go, and the questions the dashboard asks of them. Both databases, through
 * the hub's Kysely layer.
 *
 * One batch is written in one transaction, and only if its id was not seen before: a batch the
 * client retried (after a timeout, say) is never counted twice. Everything is aggregated in
 * memory first, so a batch of hundreds of events costs a handful of statements:
 * - `traffic_minutes`: exact counts per minute, from the batch's `counts` (filed under the minute
 *   the batch's period ended);
 * - `traffic_top`: per minute, the events by client address, country, AS, path, rule and user
 *   agent, each with its outcome; a sampled (passed) event weighs `1 / passSampleRate`;
 * - `report_events`: the raw events (a bounded sample: `report-retention.ts` trims it);
 * - `signal_minutes`: signals per minute and kind.
 */
import { Injectable } from '@nestjs/common';
import { type Insertable, sql, type Transaction } from 'kysely';
import { DatabaseService } from '../database/database.service.js';
import type { HubSchema, TrafficTopTable } from '../database/schema.js';
import type { ReportBatch } from './report-batch.js';

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

/** Rows per INSERT: well under SQLite's bound-parameter limit for the widest table. */
const CHUNK = 400;

/** `2026-12-01T12:34:56.789Z` -> `2026-12-01T12:34`. */
export function minuteOf(iso: string): string {
  return iso.slice(0, 16);
}

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

@Injectable()
export class ReportStore {
  constructor(private readonly database: DatabaseService) {}

  /** Writes the batch unless its id was seen before; resolves whether it was new. */
  async ingest(siteId: string, batch: ReportBatch, label: Labeler): Promise<boolean> {
    return this.database.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto('report_batches')
        .values({
          site_id: siteId,
          batch_id: batch.batchId,
          instance: batch.instance,
          events: batch.events.length,
          received_at: new Date().toISOString(),
        })
        .onConflict((oc) => oc.columns(['site_id', 'batch_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await this.writeCounts(tx, siteId, batch);
      await this.writeEvents(tx, siteId, batch, label);
      await this.writeSignals(tx, siteId, batch);
      return true;
    });
  }

  private async writeCounts(tx: Transaction<HubSchema>, siteId: string, batch: ReportBatch) {
    const minute = minuteOf(batch.periodEnd);
    const rows = new Map<
      string,
      { action: string; mode: string; rule_id: string; outcome: string; count: number }
    >();
    for (const c of batch.counts) {
      if (c.count === 0) continue;
      const key = `${c.action}\u0000${c.mode}\u0000${c.ruleId ?? ''}\u0000${c.outcome}`;
      const row = rows.get(key);
      if (row) row.count += c.count;
      else
        rows.set(key, {
          action: c.action,
          mode: c.mode,
          rule_id: c.ruleId ?? '',
          outcome: c.outcome,
          count: c.count,
        });
    }
    for (const chunk of chunks(sortedValues(rows))) {
      await tx
        .insertInto('traffic_minutes')
        .values(chunk.map((r) => ({ site_id: siteId, minute, ...r })))
        .onConflict((oc) =>
          oc
            .columns(['site_id', 'minute', 'action', 'mode', 'rule_id', 'outcome'])
            .doUpdateSet({ count: sql`traffic_minutes.count + excluded.count` }),
        )
        .execute();
    }
  }

  private async writeEvents(
    tx: Transaction<HubSchema>,
    siteId: string,
    batch: ReportBatch,
    label: Labeler,
  ) {
    if (batch.events.length === 0) return;
    const weight = batch.passSampleRate > 0 ? Math.max(1, Math.round(1 / batch.passSampleRate)) : 1;
    const top = new Map<string, Insertable<TrafficTopTable>>();
    const add = (
      minute: string,
      dimension: Dimension,
      value: string,
      outcome: string,
      count: number,
    ) => {
      const key = `${minute}\u0000${dimension}\u0000${value}\u0000${outcome}`;
      const row = top.get(key);
      if (row) row.count = Number(row.count) + count;
      else top.set(key, { site_id: siteId, minute, dimension, value, outcome, count });
    };
    const events = batch.events.map((e) => {
      const labels = label(e.ip);
      const minute = minuteOf(e.time);
      const w = e.sampled ? weight : 1;
      add(minute, 'ip', e.ip, e.outcome, w);
      add(minute, 'path', e.path, e.outcome, w);
      add(minute, 'user_agent', e.userAgent, e.outcome, w);
      if (labels.country) add(minute, 'country', labels.country, e.outcome, w);
      if (labels.asn !== null) add(minute, 'asn', String(labels.asn), e.outcome, w);
      const rule = e.ruleId ?? e.monitoredRuleId;
      if (rule) add(minute, 'rule', rule, e.outcome, w);
      return {
        site_id: siteId,
        time: e.time,
        request_id: e.requestId,
        batch_id: batch.batchId,
        instance: batch.instance,
        ip: e.ip,
        country: labels.country,
        asn: labels.asn,
        method: e.method,
        host: e.host,
        path: e.path,
        user_agent: e.userAgent,
        action: e.action,
        mode: e.mode,
        outcome: e.outcome,
        rule_id: e.ruleId,
        category: e.category,
        monitored_rule_id: e.monitoredRuleId,
        snapshot_version: e.snapshotVersion,
        sampled: e.sampled ? 1 : 0,
      };
    });
    for (const chunk of chunks(sortedValues(top))) {
      await tx
        .insertInto('traffic_top')
        .values(chunk)
        .onConflict((oc) =>
          oc
            .columns(['site_id', 'minute', 'dimension', 'value', 'outcome'])
            .doUpdateSet({ count: sql`traffic_top.count + excluded.count` }),
        )
        .execute();
    }
    for (const chunk of chunks(events, 200))
      await tx.insertInto('report_events').values(chunk).execute();
  }

  private async writeSignals(tx: Transaction<HubSchema>, siteId: string, batch: ReportBatch) {
    const rows = new Map<string, { minute: string; kind: string; count: number }>();
    for (const s of batch.signals) {
      const minute = minuteOf(s.time);
      const key = `${minute}\u0000${s.kind}`;
      const row = rows.get(key);
      if (row) row.count++;
      else rows.set(key, { minute, kind: s.kind, count: 1 });
    }
    for (const chunk of chunks(sortedValues(rows))) {
      await tx
        .insertInto('signal_minutes')
        .values(chunk.map((r) => ({ site_id: siteId, ...r })))
        .onConflict((oc) =>
          oc
            .columns(['site_id', 'minute', 'kind'])
            .doUpdateSet({ count: sql`signal_minutes.count + excluded.count` }),
        )
        .execute();
    }
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
    }));
  }
}

/**
 * The rows of an aggregation in key order: concurrent batches then take their row locks in the
 * same order (PostgreSQL would otherwise deadlock two upserts of overlapping minutes).
 */
function sortedValues<T>(rows: ReadonlyMap<string, T>): T[] {
  return [...rows.keys()].sort().map((key) => rows.get(key) as T);
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
