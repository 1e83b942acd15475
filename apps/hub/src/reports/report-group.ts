/**
 * How a group of report batches is written: in one transaction, each batch only if its id was
 * not seen before, everything aggregated in memory first so thousands of events cost a handful
 * of statements. The one implementation of it, run by both writers: PostgreSQL's on the event
 * loop through Kysely (the database does the work in its own process), SQLite's on a thread of
 * its own (`sqlite-report-writer.ts`: its calls are synchronous and would stop the event loop).
 *
 * What a group writes:
 * - `report_batches`: one row per new batch (the idempotency record);
 * - `traffic_minutes`: exact counts per minute, from the batch's `counts` (filed under the minute
 *   the batch's period ended);
 * - `traffic_top`: per minute, the events by client address, country, AS, path, rule and user
 *   agent, each with its outcome; a sampled (passed) event weighs `1 / passSampleRate`;
 * - `report_events`: the raw events, a bounded sample: those the writer's `EventSample` keeps
 *   (a budget per site and second), trimmed by `report-retention.ts`;
 * - `signal_minutes`: signals per minute and kind.
 */
import type { HubSchema } from '../database/schema.js';
import type { EventSample } from './event-sample.js';
import type { ReportBatch } from './report-batch.js';
import type { AddressLabels, Dimension } from './report-store.js';

/** A batch of a group, with the country and AS of each of its events' addresses. */
export interface GroupEntry {
  readonly siteId: string;
  readonly batch: ReportBatch;
  /** `labels[i]` labels `batch.events[i].ip`. */
  readonly labels: readonly AddressLabels[];
}

/** Runs one statement of the group's transaction; resolves with the rows it returns. */
export type RunStatement = <R>(sql: string, parameters: readonly unknown[]) => Promise<R[]>;

export type GroupDialect = 'sqlite' | 'postgres';

/** `2026-12-01T12:34:56.789Z` -> `2026-12-01T12:34`. */
export function minuteOf(iso: string): string {
  return iso.slice(0, 16);
}

/**
 * Rows per SQLite INSERT at most (10 240 parameters for the widest table, under SQLite's 32 766).
 * Shorter runs go in power-of-two sizes, so a handful of distinct statements serve every group
 * (and stay in the statement cache).
 */
const MAX_ROWS = 512;

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
  /**
   * `traffic_top`: site, minute, dimension, value, outcome, count; by site and minute, then by
   * the rest (six of these per event: shorter keys are cheaper to build and hash).
   */
  private readonly top = new Map<string, Map<string, Row>>();
  /** The `top` entry of the last event's site and minute (the next event's, nearly always). */
  private lastTop: { readonly id: string; readonly rows: Map<string, Row> } | undefined;
  /** `signal_minutes`: site, minute, kind, count. */
  readonly signals = new Map<string, Row>();
  readonly events: Row[] = [];

  constructor(private readonly sample: EventSample) {}

  add({ siteId, batch, labels }: GroupEntry): void {
    const minute = minuteOf(batch.periodEnd);
    for (const c of batch.counts) {
      if (c.count === 0) continue;
      const rule = c.ruleId ?? '';
      count(this.minutes, [siteId, minute, c.action, c.mode, rule, c.outcome], c.count);
    }
    const weight = batch.passSampleRate > 0 ? Math.max(1, Math.round(1 / batch.passSampleRate)) : 1;
    batch.events.forEach((e, i) => {
      const labelled = labels[i] as AddressLabels;
      const at = minuteOf(e.time);
      const w = e.sampled ? weight : 1;
      this.addTop(siteId, at, 'ip', e.ip, e.outcome, w);
      this.addTop(siteId, at, 'path', e.path, e.outcome, w);
      this.addTop(siteId, at, 'user_agent', e.userAgent, e.outcome, w);
      if (labelled.country) this.addTop(siteId, at, 'country', labelled.country, e.outcome, w);
      if (labelled.asn !== null) this.addTop(siteId, at, 'asn', String(labelled.asn), e.outcome, w);
      const rule = e.ruleId ?? e.monitoredRuleId;
      if (rule) this.addTop(siteId, at, 'rule', rule, e.outcome, w);
      if (!this.sample.keep(siteId, e.time)) return;
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
    });
    for (const s of batch.signals) count(this.signals, [siteId, minuteOf(s.time), s.kind], 1);
  }

  /** {@link count} for `traffic_top`, up to six times per event. */
  private addTop(
    siteId: string,
    minute: string,
    dimension: Dimension,
    value: string,
    outcome: string,
    n: number,
  ): void {
    const id = `${siteId}\u0000${minute}`;
    let bucket = this.lastTop;
    if (bucket?.id !== id) {
      let rows = this.top.get(id);
      if (rows === undefined) {
        rows = new Map();
        this.top.set(id, rows);
      }
      bucket = { id, rows };
      this.lastTop = bucket;
    }
    const key = `${dimension}\u0000${value}\u0000${outcome}`;
    const row = bucket.rows.get(key);
    if (row) row[5] = (row[5] as number) + n;
    else bucket.rows.set(key, [siteId, minute, dimension, value, outcome, n]);
  }

  /** The `traffic_top` rows in key order (see {@link upsert}). */
  topRows(): Row[] {
    return [...this.top.keys()]
      .sort()
      .flatMap((id) => sortedRows(this.top.get(id) as Map<string, Row>));
  }
}

/** The rows of `rows` in the order of their keys. */
function sortedRows(rows: ReadonlyMap<string, Row>): Row[] {
  return [...rows.keys()].sort().map((k) => rows.get(k) as Row);
}

/** Adds `n` to the row of `key` (every column but the count), creating it at `n`. */
function count(rows: Map<string, Row>, key: string[], n: number): void {
  const id = key.join('\u0000');
  const row = rows.get(id);
  if (row) row[key.length] = (row[key.length] as number) + n;
  else rows.set(id, [...key, n]);
}

/**
 * Writes `group` with `run`, inside a transaction the caller opened and commits; resolves, per
 * entry, whether its batch was new (a batch seen before, or a second copy in the same group,
 * writes nothing). `sample` is the writer's budget of raw events (one per writer, kept across
 * groups); every event is counted whether or not it is kept.
 */
export async function writeReportGroup(
  dialect: GroupDialect,
  run: RunStatement,
  group: readonly GroupEntry[],
  receivedAt: string,
  sample: EventSample,
): Promise<boolean[]> {
  sample.rotate();
  const first = new Map<string, number>(); // the first copy of each batch in the group
  group.forEach((w, i) => {
    const id = `${w.siteId}\u0000${w.batch.batchId}`;
    if (!first.has(id)) first.set(id, i);
  });
  const batchRows = [...first.values()].map((i) => {
    const { siteId, batch } = group[i] as GroupEntry;
    return [siteId, batch.batchId, batch.instance, batch.events.length, receivedAt];
  });
  const rows = await insert<{ site_id: string; batch_id: string }>(
    dialect,
    run,
    BATCHES,
    batchRows,
    'on conflict (site_id, batch_id) do nothing returning site_id, batch_id',
  );
  const inserted = new Set(rows.map((r) => `${r.site_id}\u0000${r.batch_id}`));
  const stored = group.map((w, i) => {
    const id = `${w.siteId}\u0000${w.batch.batchId}`;
    return first.get(id) === i && inserted.has(id);
  });
  const aggregated = new GroupRows(sample);
  group.forEach((w, i) => {
    if (stored[i]) aggregated.add(w);
  });
  await upsert(dialect, run, MINUTES, sortedRows(aggregated.minutes));
  await upsert(dialect, run, TOP, aggregated.topRows());
  await upsert(dialect, run, SIGNALS, sortedRows(aggregated.signals));
  await insert(dialect, run, EVENTS, aggregated.events);
  return stored;
}

/**
 * Adds the counts of `sorted` (the last column; keyed by all the others) to the counter table.
 * The rows come in key order: concurrent writers (other hub instances) then take their row
 * locks in the same order (PostgreSQL would otherwise deadlock two upserts of overlapping
 * minutes).
 */
async function upsert(
  dialect: GroupDialect,
  run: RunStatement,
  table: Table,
  sorted: readonly Row[],
): Promise<void> {
  const key = table.columns.slice(0, -1).map(([name]) => name);
  const conflict = `on conflict (${key.join(', ')}) do update set count = ${table.name}.count + excluded.count`;
  await insert(dialect, run, table, sorted, conflict);
}

/** SQLite statements per table, row count and suffix (see {@link MAX_ROWS}). */
const sqliteStatements = new Map<string, string>();

/**
 * Inserts `rows` in as few statements as the database allows, written out once per table,
 * size and dialect rather than through a query builder (building the same statement for every
 * batch was a good part of the cost of ingestion):
 * - SQLite: multi-row `VALUES` of at most {@link MAX_ROWS} rows, the same few sizes every time
 *   (so the writer's prepared statements are reused);
 * - PostgreSQL: one statement for all the rows, each column sent as one array and turned back
 *   into rows by `unnest` (a 10 000-parameter `VALUES` costs more to parse and plan than to
 *   run; `unnest` keeps the order of the rows, so the upserts take their locks in key order).
 */
async function insert<R>(
  dialect: GroupDialect,
  run: RunStatement,
  table: Table,
  rows: readonly Row[],
  suffix = '',
): Promise<R[]> {
  if (rows.length === 0) return [];
  const names = table.columns.map(([name]) => name).join(', ');
  const into = `insert into ${table.name} (${names})`;
  if (dialect === 'postgres') {
    const arrays = table.columns.map((_, i) => rows.map((row) => row[i] ?? null));
    const types = table.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
    return run<R>(`${into} select * from unnest(${types}) ${suffix}`, arrays);
  }
  const out: R[] = [];
  for (const chunk of chunks(rows)) {
    const id = `${table.name} ${chunk.length} ${suffix}`;
    let text = sqliteStatements.get(id);
    if (text === undefined) {
      const tuple = `(${table.columns.map(() => '?').join(', ')})`;
      text = `${into} values ${Array(chunk.length).fill(tuple).join(', ')} ${suffix}`;
      sqliteStatements.set(id, text);
    }
    out.push(...(await run<R>(text, chunk.flat())));
  }
  return out;
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
