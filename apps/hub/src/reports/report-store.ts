/**
 * Where ingested reports go, and the questions the dashboard asks of them. Both databases, through
 * the hub's Kysely layer.
 *
 * A batch is written in one transaction, and only if its id was not seen before: a batch the
 * client retried (after a timeout, say) is never counted twice. Batches handed over while a
 * write is in progress (the workers ingest up to `HUB_INGEST_CONCURRENCY` at once) wait and are
 * written together, in the next transaction: the database sees one commit and one set of
 * statements per group instead of per batch. Each `ingest` still resolves only once its batch
 * is committed; a group the database refuses is tried again batch by batch, so one bad batch
 * fails alone. Everything is aggregated in memory
 * first, over the whole group, so a group of thousands of events costs a handful of statements:
 * - `traffic_minutes`: exact counts per minute, from the batch's `counts` (filed under the minute
 *   the batch's period ended);
 * - `traffic_top`: per minute, the events by client address, country, AS, path, rule and user
 *   agent, each with its outcome; a sampled (passed) event weighs `1 / passSampleRate`;
 * - `report_events`: the raw events (a bounded sample: `report-retention.ts` trims it);
 * - `signal_minutes`: signals per minute and kind.
 */
import { Injectable } from '@nestjs/common';
import { CompiledQuery, type Transaction } from 'kysely';
import { DatabaseService } from '../database/database.service.js';
import type { HubSchema } from '../database/schema.js';
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
 * A group closes at this many batches or events: it bounds how long one write holds the database
 * (and, on SQLite, whose calls are synchronous, the event loop: about 0.1 s at the bound).
 */
const GROUP_BATCHES = 64;
const GROUP_EVENTS = 8000;
/**
 * Rows per SQLite INSERT at most (10 240 parameters for the widest table, under SQLite's 32 766).
 * Shorter runs go in power-of-two sizes, so a handful of distinct statements serve every group
 * (and stay in the statement cache).
 */
const MAX_ROWS = 512;

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

/** A batch handed to {@link ReportStore.ingest}, waiting for its group's transaction. */
interface Waiting {
  readonly siteId: string;
  readonly batch: ReportBatch;
  readonly label: Labeler;
  readonly resolve: (stored: boolean) => void;
  readonly reject: (error: unknown) => void;
}

type Row = (string | number | null)[];

/** A table as the bulk INSERTs below write it: its columns in row order, with their types. */
interface Table {
  readonly name: keyof HubSchema;
  readonly columns: readonly (readonly [name: string, type: 'text' | 'integer'])[];
}

const textColumns = (...names: string[]) => names.map((n) => [n, 'text'] as const);
const integerColumns = (...names: string[]) => names.map((n) => [n, 'integer'] as const);

const BATCHES: Table = {
  name: 'report_batches',
  columns: [
    ...textColumns('site_id', 'batch_id', 'instance'),
    ...integerColumns('events'),
    ...textColumns('received_at'),
  ],
};
const MINUTES: Table = {
  name: 'traffic_minutes',
  columns: [
    ...textColumns('site_id', 'minute', 'action', 'mode', 'rule_id', 'outcome'),
    ...integerColumns('count'),
  ],
};
const TOP: Table = {
  name: 'traffic_top',
  columns: [
    ...textColumns('site_id', 'minute', 'dimension', 'value', 'outcome'),
    ...integerColumns('count'),
  ],
};
const SIGNALS: Table = {
  name: 'signal_minutes',
  columns: [...textColumns('site_id', 'minute', 'kind'), ...integerColumns('count')],
};
const EVENTS: Table = {
  name: 'report_events',
  columns: [
    ...textColumns('site_id', 'time', 'request_id', 'batch_id', 'instance', 'ip', 'country'),
    ...integerColumns('asn'),
    ...textColumns('method', 'host', 'path', 'user_agent', 'action', 'mode', 'outcome'),
    ...textColumns('rule_id', 'category', 'monitored_rule_id'),
    ...integerColumns('snapshot_version', 'sampled'),
    ...textColumns('trace_id'),
  ],
};

/** The aggregated rows of a group, keyed so they sort in one order everywhere. */
class GroupRows {
  /** `traffic_minutes`: site, minute, action, mode, rule_id, outcome, count. */
  readonly minutes = new Map<string, Row>();
  /** `traffic_top`: site, minute, dimension, value, outcome, count. */
  readonly top = new Map<string, Row>();
  /** `signal_minutes`: site, minute, kind, count. */
  readonly signals = new Map<string, Row>();
  readonly events: Row[] = [];

  add(batch: ReportBatch, siteId: string, label: Labeler): void {
    const minute = minuteOf(batch.periodEnd);
    for (const c of batch.counts) {
      if (c.count === 0) continue;
      const rule = c.ruleId ?? '';
      count(this.minutes, [siteId, minute, c.action, c.mode, rule, c.outcome], c.count);
    }
    const weight = batch.passSampleRate > 0 ? Math.max(1, Math.round(1 / batch.passSampleRate)) : 1;
    for (const e of batch.events) {
      const labelled = label(e.ip);
      const at = minuteOf(e.time);
      const w = e.sampled ? weight : 1;
      this.addTop(siteId, at, 'ip', e.ip, e.outcome, w);
      this.addTop(siteId, at, 'path', e.path, e.outcome, w);
      this.addTop(siteId, at, 'user_agent', e.userAgent, e.outcome, w);
      if (labelled.country) this.addTop(siteId, at, 'country', labelled.country, e.outcome, w);
      if (labelled.asn !== null) this.addTop(siteId, at, 'asn', String(labelled.asn), e.outcome, w);
      const rule = e.ruleId ?? e.monitoredRuleId;
      if (rule) this.addTop(siteId, at, 'rule', rule, e.outcome, w);
      this.events.push([
        siteId,
        e.time,
        e.requestId,
        batch.batchId,
        batch.instance,
        e.ip,
        labelled.country,
        labelled.asn,
        e.method,
        e.host,
        e.path,
        e.userAgent,
        e.action,
        e.mode,
        e.outcome,
        e.ruleId,
        e.category,
        e.monitoredRuleId,
        e.snapshotVersion,
        e.sampled ? 1 : 0,
        e.traceparent === null ? null : e.traceparent.slice(3, 35),
      ]);
    }
    for (const s of batch.signals) count(this.signals, [siteId, minuteOf(s.time), s.kind], 1);
  }

  /** {@link count} for `traffic_top`, up to six times per event, without arrays for the key. */
  private addTop(
    siteId: string,
    minute: string,
    dimension: Dimension,
    value: string,
    outcome: string,
    n: number,
  ): void {
    const id = `${siteId}\u0000${minute}\u0000${dimension}\u0000${value}\u0000${outcome}`;
    const row = this.top.get(id);
    if (row) row[5] = (row[5] as number) + n;
    else this.top.set(id, [siteId, minute, dimension, value, outcome, n]);
  }
}

/** Adds `n` to the row of `key` (every column but the count), creating it at `n`. */
function count(rows: Map<string, Row>, key: string[], n: number): void {
  const id = key.join('\u0000');
  const row = rows.get(id);
  if (row) row[key.length] = (row[key.length] as number) + n;
  else rows.set(id, [...key, n]);
}

@Injectable()
export class ReportStore {
  private readonly waiting: Waiting[] = [];
  /** Whether a group is being written (one at a time: the next forms meanwhile). */
  private writing = false;
  /** SQLite statements per table and row count (see {@link MAX_ROWS}). */
  private readonly statements = new Map<string, string>();

  constructor(private readonly database: DatabaseService) {}

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
    return this.database.db.transaction().execute(async (tx) => {
      const receivedAt = new Date().toISOString();
      const first = new Map<string, number>(); // the first copy of each batch in the group
      group.forEach((w, i) => {
        const id = `${w.siteId}\u0000${w.batch.batchId}`;
        if (!first.has(id)) first.set(id, i);
      });
      const inserted = new Set<string>();
      const batchRows = [...first.values()].map((i) => {
        const { siteId, batch } = group[i] as Waiting;
        return [siteId, batch.batchId, batch.instance, batch.events.length, receivedAt];
      });
      const rows = await this.insert<{ site_id: string; batch_id: string }>(
        tx,
        BATCHES,
        batchRows,
        'on conflict (site_id, batch_id) do nothing returning site_id, batch_id',
      );
      for (const r of rows) inserted.add(`${r.site_id}\u0000${r.batch_id}`);
      const stored = group.map((w, i) => {
        const id = `${w.siteId}\u0000${w.batch.batchId}`;
        return first.get(id) === i && inserted.has(id);
      });
      const aggregated = new GroupRows();
      group.forEach((w, i) => {
        if (stored[i]) aggregated.add(w.batch, w.siteId, w.label);
      });
      await this.upsert(tx, MINUTES, aggregated.minutes);
      await this.upsert(tx, TOP, aggregated.top);
      await this.upsert(tx, SIGNALS, aggregated.signals);
      await this.insert(tx, EVENTS, aggregated.events);
      return stored;
    });
  }

  /**
   * Adds the counts of `rows` (the last column; keyed by all the others) to the counter table,
   * in key order: concurrent writers (other hub instances) then take their row locks in the same
   * order (PostgreSQL would otherwise deadlock two upserts of overlapping minutes).
   */
  private async upsert(
    tx: Transaction<HubSchema>,
    table: Table,
    rows: ReadonlyMap<string, Row>,
  ): Promise<void> {
    const sorted = [...rows.keys()].sort().map((k) => rows.get(k) as Row);
    const key = table.columns.slice(0, -1).map(([name]) => name);
    const conflict = `on conflict (${key.join(', ')}) do update set count = ${table.name}.count + excluded.count`;
    await this.insert(tx, table, sorted, conflict);
  }

  /**
   * Inserts `rows` in as few statements as the database allows, written out once per table,
   * size and dialect rather than through the query builder (building the same statement for
   * every batch was a good part of the cost of ingestion):
   * - SQLite: multi-row `VALUES` of at most {@link MAX_ROWS} rows, the same few sizes every time
   *   (prepared once, see the statement cache in `database.service.ts`);
   * - PostgreSQL: one statement for all the rows, each column sent as one array and turned back
   *   into rows by `unnest` (a 10 000-parameter `VALUES` costs more to parse and plan than to
   *   run; `unnest` keeps the order of the rows, so the upserts take their locks in key order).
   */
  private async insert<R>(
    tx: Transaction<HubSchema>,
    table: Table,
    rows: readonly Row[],
    suffix = '',
  ): Promise<R[]> {
    if (rows.length === 0) return [];
    const names = table.columns.map(([name]) => name).join(', ');
    const into = `insert into ${table.name} (${names})`;
    if (this.database.dialect === 'postgres') {
      const arrays = table.columns.map((_, i) => rows.map((row) => row[i] ?? null));
      const types = table.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
      const text = `${into} select * from unnest(${types}) ${suffix}`;
      return [...(await tx.executeQuery<R>(CompiledQuery.raw(text, arrays))).rows];
    }
    const out: R[] = [];
    for (const chunk of chunks(rows)) {
      const id = `${table.name} ${chunk.length} ${suffix}`;
      let text = this.statements.get(id);
      if (text === undefined) {
        const tuple = `(${table.columns.map(() => '?').join(', ')})`;
        text = `${into} values ${Array(chunk.length).fill(tuple).join(', ')} ${suffix}`;
        this.statements.set(id, text);
      }
      out.push(...(await tx.executeQuery<R>(CompiledQuery.raw(text, chunk.flat()))).rows);
    }
    return out;
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

/** `items` in runs of {@link MAX_ROWS}, the rest in decreasing powers of two. */
function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (let size = MAX_ROWS; at < items.length; ) {
    if (items.length - at >= size) {
      out.push(items.slice(at, at + size));
      at += size;
    } else size >>= 1;
  }
  return out;
}
