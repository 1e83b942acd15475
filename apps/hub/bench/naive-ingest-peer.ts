/**
 * The naive peer of `npm run bench:ingest`: what ingestion looks like without a queue, workers or
 * aggregation. A bare `node:http` server that takes the same gzipped report batches, checks
 * little (a JSON object with an `events` array), and writes each event with its own INSERT,
 * outside any transaction, before it answers 200. The table has the columns and the index of the
 * hub's `report_events`; there are no counters or top lists (a dashboard would GROUP BY the raw
 * events instead).
 *
 * Run by the bench through `@rampart/test-services/service-process` with exactly this
 * environment: `NAIVE_PORT`, and `NAIVE_SQLITE_FILE` (better-sqlite3 with the hub's own pragmas:
 * WAL, default synchronous) or `NAIVE_DATABASE_URL` (a `pg` pool of 10, as the hub's). Answers
 * `GET /ready` once the table exists and `GET /count` with the rows stored.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import SQLite from 'better-sqlite3';
import pg from 'pg';

const gunzip = promisify(gunzipCallback);

const COLUMNS = [
  'site_id',
  'time',
  'request_id',
  'batch_id',
  'instance',
  'ip',
  'method',
  'host',
  'path',
  'user_agent',
  'action',
  'mode',
  'outcome',
  'rule_id',
  'category',
  'monitored_rule_id',
  'snapshot_version',
  'sampled',
] as const;

const CREATE = `CREATE TABLE IF NOT EXISTS naive_events (
  site_id text NOT NULL, time text NOT NULL, request_id text NOT NULL, batch_id text NOT NULL,
  instance text NOT NULL, ip text NOT NULL, country text, asn integer, method text NOT NULL,
  host text NOT NULL, path text NOT NULL, user_agent text NOT NULL, action text NOT NULL,
  mode text NOT NULL, outcome text NOT NULL, rule_id text, category text,
  monitored_rule_id text, snapshot_version integer, sampled integer NOT NULL)`;
const INDEX = 'CREATE INDEX IF NOT EXISTS naive_events_site_time ON naive_events (site_id, time)';

interface Event {
  readonly requestId: string;
  readonly time: string;
  readonly ip: string;
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

interface Batch {
  readonly batchId: string;
  readonly instance: string;
  readonly events: readonly Event[];
}

/** One event as the statement's parameters, in `COLUMNS` order. */
function values(batch: Batch, e: Event): (string | number | null)[] {
  return [
    'bench',
    e.time,
    e.requestId,
    batch.batchId,
    batch.instance,
    e.ip,
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
  ];
}

interface Store {
  insert(batch: Batch): Promise<void>;
  count(): Promise<number>;
}

function sqliteStore(file: string): Store {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(CREATE);
  db.exec(INDEX);
  const insert = db.prepare(
    `INSERT INTO naive_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
  );
  const count = db.prepare('SELECT count(*) AS n FROM naive_events');
  return {
    insert: async (batch) => {
      for (const e of batch.events) insert.run(values(batch, e));
    },
    count: async () => Number((count.get() as { n: number }).n),
  };
}

async function postgresStore(url: string): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // the bench stops the server after this peer
  await pool.query(CREATE);
  await pool.query(INDEX);
  const text = `INSERT INTO naive_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
  return {
    insert: async (batch) => {
      for (const e of batch.events) await pool.query(text, values(batch, e));
    },
    count: async () =>
      Number(
        (await pool.query<{ n: string }>('SELECT count(*) AS n FROM naive_events')).rows[0]?.n,
      ),
  };
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzip(raw) : raw;
}

function answer(res: ServerResponse, status: number, json: unknown): void {
  const text = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': text.length });
  res.end(text);
}

async function main(): Promise<void> {
  const port = Number(process.env.NAIVE_PORT);
  const file = process.env.NAIVE_SQLITE_FILE;
  const url = process.env.NAIVE_DATABASE_URL;
  const store = url ? await postgresStore(url) : sqliteStore(file ?? 'naive.sqlite');
  const server = createServer((req, res) => {
    const handle = async () => {
      if (req.method === 'GET' && req.url === '/ready') return answer(res, 200, { ready: true });
      if (req.method === 'GET' && req.url === '/count')
        return answer(res, 200, { events: await store.count() });
      if (req.method !== 'POST' || req.url !== '/v1/reports')
        return answer(res, 404, { error: 'not found' });
      const batch = JSON.parse((await body(req)).toString('utf8')) as Batch;
      if (typeof batch !== 'object' || batch === null || !Array.isArray(batch.events))
        return answer(res, 400, { error: 'events must be an array' });
      await store.insert(batch);
      return answer(res, 200, { accepted: batch.events.length });
    };
    handle().catch((error: unknown) => answer(res, 500, { error: String(error) }));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();
