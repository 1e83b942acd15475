/**
 * `npm run bench:ingest`: how many report events per second the hub ingests, sustained, through
 * the whole path a WAF client's batch takes: `POST /v1/reports` (gzip, site key, validation),
 * the BullMQ queue in Redis, the ingestion workers, and the database (per-minute counters, top
 * lists, the raw event sample), on the embedded SQLite and on PostgreSQL; and, in the same run,
 * the naive peer (`naive-ingest-peer.ts`: one INSERT per event as the batch arrives, no queue, no
 * transaction) on each database.
 *
 * Each hub is the real one (`@rampart/test-services/hub`, its own Redis), with a site whose
 * snapshot carries the full public datasets (the ~1.07M country and ASN ranges of
 * `@ip-location-db`), so every event's address is labelled as in production, and its detectors
 * switched off (the traffic is an attack: see `switchDetectionOff`). The batches are
 * the client's format (version 1, 250 events by default, gzip), made before the run from a fixed
 * seed: a site under attack (blocks by pattern, address, country, AS and reputation rules, rate
 * limits, a monitor-mode rule, 1% of the passed requests sampled), tens of thousands of client
 * addresses, thousands of paths, hundreds of user agents, login failures as signals, rate-limit
 * keys and address counts. Every target gets the same batches from the same senders
 * (`BENCH_SENDERS` concurrent connections, each with one batch in flight, like a fleet of
 * clients), until the batches run out or `BENCH_SECONDS` have passed.
 *
 * Measured, per target: from the first POST until every accepted event is durably aggregated.
 * For a hub that is when its own read API (`GET /v1/sites/:id/traffic`) counts every request the
 * accepted batches counted; then the classes, the top rules and the top addresses are checked
 * against what was sent, exactly (the run fails otherwise). For a naive peer it is its last
 * answer (it answers once the rows are written). Also: how fast the endpoint accepted the
 * batches, POST latency, the deepest the ingestion queue got (read from the hub's Redis), and the
 * CPU and memory of the hub (or peer) process. Prints a table, then one JSON line.
 *
 * Knobs (development only): BENCH_SECONDS (load per target, default 20), BENCH_SENDERS (16),
 * BENCH_BATCH_EVENTS (250), BENCH_EVENTS (events made, default 1 000 000), BENCH_TARGETS (a
 * comma-separated subset of hub-sqlite, naive-sqlite, hub-postgres, naive-postgres),
 * BENCH_DATASET_LINES (only the first N lines of each dataset file: fewer addresses labelled),
 * BENCH_PROFILE_DIR (each hub writes a V8 CPU profile there when it stops: `--cpu-prof`),
 * BENCH_DETECTION=on (keep the site's default detectors: see `switchDetectionOff`),
 * BENCH_INGEST_CONCURRENCY (the hubs' `HUB_INGEST_CONCURRENCY`; default the hub's own),
 * BENCH_TRACING=on (the hubs run with `@rampart/telemetry`, every request and job traced into a
 * Jaeger the benchmark starts: what tracing costs ingestion, against the same run's naive peer).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveDatasetFiles } from '@rampart/rules-core/bench/dataset-files';
import { delay, findFreePort } from '@rampart/test-services/free-port';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { type JaegerHandle, startJaeger } from '@rampart/test-services/jaeger-server';
import { type PostgresServerHandle, startPostgres } from '@rampart/test-services/postgres-server';
import { baseEnvironment, startServiceProcess } from '@rampart/test-services/service-process';
import { telemetryEnvironment } from '@rampart/test-services/telemetry-environment';
import { Queue } from 'bullmq';
import { datasetBody, uploadDataset } from './hub-datasets.ts';
import { type Kind, makeBatches, type Sent } from './ingest-traffic.ts';

const SECONDS = positiveInt('BENCH_SECONDS', 20);
const SENDERS = positiveInt('BENCH_SENDERS', 16);
const BATCH_EVENTS = positiveInt('BENCH_BATCH_EVENTS', 250);
const EVENTS = positiveInt('BENCH_EVENTS', 1_000_000);
const LINES = process.env.BENCH_DATASET_LINES ? positiveInt('BENCH_DATASET_LINES', 1) : undefined;
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const DETECTION = process.env.BENCH_DETECTION === 'on';
const TRACING = process.env.BENCH_TRACING === 'on';
const CONCURRENCY = process.env.BENCH_INGEST_CONCURRENCY
  ? String(positiveInt('BENCH_INGEST_CONCURRENCY', 2))
  : undefined;
const TARGET_NAMES = ['hub-sqlite', 'naive-sqlite', 'hub-postgres', 'naive-postgres'] as const;
type TargetName = (typeof TARGET_NAMES)[number];
const TARGETS = targetsOf(process.env.BENCH_TARGETS);
const SITE = 'bench';
/** Longest wait for the last events to be aggregated once the load ended. */
const DRAIN_LIMIT_MS = 180_000;
/** The hub's ingestion queue (`REPORT_INGEST_QUEUE`, BullMQ prefix `rampart`): only observed. */
const QUEUE = { name: 'report-ingest', prefix: 'rampart' };
/** With BENCH_TRACING=on, the Jaeger the hubs export to (started by `main`). */
let jaeger: JaegerHandle | undefined;

function positiveInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name}: ${JSON.stringify(text)} is not a positive integer`);
  return value;
}

function targetsOf(text: string | undefined): readonly TargetName[] {
  if (!text) return TARGET_NAMES;
  const names = text.split(',').map((s) => s.trim());
  for (const name of names)
    if (!(TARGET_NAMES as readonly string[]).includes(name))
      throw new Error(`BENCH_TARGETS: ${name} is not one of ${TARGET_NAMES.join(', ')}`);
  return names as TargetName[];
}

const started = performance.now();
function progress(message: string): void {
  process.stderr.write(
    `[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`,
  );
}

// ---------------------------------------------------------------------------------------------
// Sending.

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly body: string;
}

function post(agent: Agent, url: string, key: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        timeout: 60_000,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': body.length,
          'user-agent': 'rampart-waf-client/0.1.0',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

interface Load {
  readonly accepted: readonly Sent[];
  readonly firstPostAt: number;
  readonly lastAnswerAt: number;
  readonly latencies: readonly number[];
  /** Answers 429/503 (the sender waited `Retry-After`, as the client does, and sent it again). */
  readonly refused: number;
}

/** Every sender posts the next batch as soon as its previous one is answered. */
async function drive(url: string, key: string, batches: readonly Sent[]): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
  const accepted: Sent[] = [];
  const latencies: number[] = [];
  let refused = 0;
  let next = 0;
  const firstPostAt = performance.now();
  const deadline = firstPostAt + SECONDS * 1000;
  let lastAnswerAt = firstPostAt;
  const sender = async () => {
    while (next < batches.length && performance.now() < deadline) {
      const batch = batches[next++] as Sent;
      for (;;) {
        const sentAt = performance.now();
        const answer = await post(agent, `${url}/v1/reports`, key, batch.body);
        lastAnswerAt = performance.now();
        latencies.push(lastAnswerAt - sentAt);
        if (answer.status === 200 || answer.status === 202) {
          accepted.push(batch);
          break;
        }
        if (answer.status !== 429 && answer.status !== 503)
          throw new Error(
            `POST /v1/reports answered ${answer.status}: ${answer.body.slice(0, 300)}`,
          );
        refused++;
        await delay(1000 * Number(answer.retryAfter ?? 1));
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: SENDERS }, sender));
  } finally {
    agent.destroy();
  }
  return { accepted, firstPostAt, lastAnswerAt, latencies, refused };
}

// ---------------------------------------------------------------------------------------------
// Measuring.

interface Result {
  readonly target: TargetName;
  readonly events: number;
  readonly batches: number;
  /** From the first POST until every event was aggregated. */
  readonly seconds: number;
  /** From the first POST until the last answer: how fast the endpoint took the batches. */
  readonly loadSeconds: number;
  readonly eventsPerS: number;
  readonly postP50: number;
  readonly postP99: number;
  readonly refused: number;
  readonly queueMax: number | null;
  /** Cores the server process used on average (CPU seconds per second). */
  readonly serverCores: number | null;
  readonly serverRssMaxMb: number | null;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

/** CPU seconds a process has used so far (Linux), or null. */
function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ = 100
  } catch {
    return null;
  }
}

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Samples a process's memory (and optionally a queue's depth) until stopped. */
function sampler(pid: number | undefined, depth?: () => Promise<number>) {
  let rssMax = rssMb(pid);
  let depthMax = 0;
  let busy = false;
  const timer = setInterval(() => {
    rssMax = Math.max(rssMax, rssMb(pid));
    if (!depth || busy) return;
    busy = true;
    depth()
      .then((n) => {
        depthMax = Math.max(depthMax, n);
      })
      .catch(() => {})
      .finally(() => {
        busy = false;
      });
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return { rssMax, depthMax };
    },
  };
}

function resultOf(
  target: TargetName,
  load: Load,
  doneAt: number,
  cpu: number | null,
  queueMax: number | null,
  rssMax: number | null,
): Result {
  const events = load.accepted.reduce((n, b) => n + b.events, 0);
  const seconds = (doneAt - load.firstPostAt) / 1000;
  const sorted = [...load.latencies].sort((a, b) => a - b);
  return {
    target,
    events,
    batches: load.accepted.length,
    seconds,
    loadSeconds: (load.lastAnswerAt - load.firstPostAt) / 1000,
    eventsPerS: events / seconds,
    postP50: percentile(sorted, 50),
    postP99: percentile(sorted, 99),
    refused: load.refused,
    queueMax,
    serverCores: cpu === null ? null : cpu / seconds,
    serverRssMaxMb: rssMax,
  };
}

// ---------------------------------------------------------------------------------------------
// The hub.

/**
 * Turns every detector of the site off, through the hub's detection API (where the hub has
 * one): the bench's traffic is an attack, and the automatic blocks it would publish start a
 * snapshot build (on the full datasets) every few seconds, which is not ingestion.
 */
async function switchDetectionOff(hub: Hub): Promise<void> {
  const path = `${hub.url}/v1/sites/${SITE}/detection`;
  const headers = { authorization: `Bearer ${hub.adminToken}`, 'content-type': 'application/json' };
  const current = await fetch(path, { headers });
  if (current.status === 404) return; // a hub without detection
  if (current.status !== 200) throw new Error(`GET detection settings: ${current.status}`);
  const settings = (await current.json()) as Record<string, unknown>;
  const off = Object.fromEntries(Object.keys(settings).map((name) => [name, { enabled: false }]));
  const put = await fetch(path, { method: 'PUT', headers, body: JSON.stringify(off) });
  if (put.status !== 200)
    throw new Error(`PUT detection settings: ${put.status} ${await put.text()}`);
}

/** A hub with the datasets and a site whose first snapshot is built; resolves with its key. */
async function prepareHub(hub: Hub): Promise<string> {
  const files = resolveDatasetFiles();
  await uploadDataset(hub, 'country', 'geo-v4', datasetBody(files.country.files[0], LINES));
  await uploadDataset(hub, 'country', 'geo-v6', datasetBody(files.country.files[1], LINES));
  await uploadDataset(hub, 'asn', 'asn-v4', datasetBody(files.asn.files[0], LINES));
  await uploadDataset(hub, 'asn', 'asn-v6', datasetBody(files.asn.files[1], LINES));
  const key = await hub.createSite(SITE);
  if (!DETECTION) await switchDetectionOff(hub);
  await hub.addRule(SITE, {
    id: 'wp-probes',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-' }],
  });
  return key;
}

/** A window that holds every minute the batches were filed under. */
function windowQuery(): string {
  const from = new Date(Date.now() - 3_600_000).toISOString();
  const to = new Date(Date.now() + 3_600_000).toISOString();
  return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
}

interface TrafficMinute {
  readonly allowed: number;
  readonly passed: number;
  readonly blocked: number;
  readonly rate_limited: number;
  readonly monitored: number;
  readonly unevaluated: number;
}

async function trafficTotals(hub: Hub): Promise<Record<keyof TrafficMinute, number>> {
  const { minutes } = await hub.admin<{ minutes: TrafficMinute[] }>(
    'GET',
    `/v1/sites/${SITE}/traffic?${windowQuery()}`,
  );
  const totals = {
    allowed: 0,
    passed: 0,
    blocked: 0,
    rate_limited: 0,
    monitored: 0,
    unevaluated: 0,
  };
  for (const m of minutes)
    for (const k of Object.keys(totals) as (keyof TrafficMinute)[]) totals[k] += m[k];
  return totals;
}

/** The hub's counters, top rules and top addresses against what the accepted batches carried. */
async function verifyHub(hub: Hub, accepted: readonly Sent[]): Promise<void> {
  const expected = {
    allowed: 0,
    passed: 0,
    blocked: 0,
    rate_limited: 0,
    monitored: 0,
    unevaluated: 0,
  };
  const rules = new Map<string, number>();
  const ips = new Map<string, number>();
  for (const b of accepted) {
    for (const [k, n] of Object.entries(b.classes)) expected[k as Kind] += n;
    for (const [rule, n] of b.rules) rules.set(rule, (rules.get(rule) ?? 0) + n);
    b.ips.forEach((ip, i) => {
      ips.set(ip, (ips.get(ip) ?? 0) + (b.weights[i] ?? 0));
    });
  }
  const got = await trafficTotals(hub);
  if (JSON.stringify(got) !== JSON.stringify(expected))
    throw new Error(`traffic counters ${JSON.stringify(got)}, sent ${JSON.stringify(expected)}`);
  const top = (map: ReadonlyMap<string, number>, limit: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, limit)
      .map(([value, count]) => ({ value, count }));
  for (const [dimension, map] of [
    ['rule', rules],
    ['ip', ips],
  ] as const) {
    const listed = await hub.admin<{ value: string; count: number }[]>(
      'GET',
      `/v1/sites/${SITE}/traffic/top?dimension=${dimension}&limit=20&${windowQuery()}`,
    );
    const want = top(map, 20);
    if (JSON.stringify(listed) !== JSON.stringify(want))
      throw new Error(`top ${dimension}: ${JSON.stringify(listed)}, sent ${JSON.stringify(want)}`);
  }
  const events = await hub.admin<unknown[]>('GET', `/v1/sites/${SITE}/events?limit=10`);
  if (events.length !== 10) throw new Error(`the hub lists ${events.length} events, not 10`);
}

async function benchHub(
  target: TargetName,
  batches: readonly Sent[],
  databaseUrl: string | undefined,
): Promise<Result> {
  const traced =
    jaeger === undefined
      ? {}
      : telemetryEnvironment({
          otlpEndpoint: jaeger.otlpEndpoint,
          metricsPort: await findFreePort(),
          ...(PROFILE_DIR ? { nodeOptions: `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}` } : {}),
        });
  const hub = await startHub({
    databaseUrl,
    env: {
      HUB_LOG_LEVEL: 'warn',
      ...(CONCURRENCY ? { HUB_INGEST_CONCURRENCY: CONCURRENCY } : {}),
      ...(PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}` } : {}),
      ...traced,
    },
  });
  const queue = new Queue(QUEUE.name, { connection: { url: hub.redis.url }, prefix: QUEUE.prefix });
  try {
    progress(
      `${target}: hub on ${hub.url}; uploading the datasets${LINES ? ` (first ${LINES} lines each)` : ''}`,
    );
    const key = await prepareHub(hub);
    progress(`${target}: site and snapshot ready; sending for up to ${SECONDS} s`);
    const cpuBefore = cpuSeconds(hub.pid);
    const watch = sampler(hub.pid, () => queue.getJobCountByTypes('wait', 'active', 'prioritized'));
    const loading = drive(hub.url, key, batches);
    let load: Load | undefined;
    void loading.then((l) => {
      load = l;
    });
    let doneAt = 0;
    for (;;) {
      const totals = await trafficTotals(hub);
      const counted = Object.values(totals).reduce((a, b) => a + b, 0);
      const at = performance.now();
      if (load) {
        const want = load.accepted.reduce((n, b) => n + b.requests, 0);
        if (counted >= want) {
          doneAt = at;
          break;
        }
        if (at - load.lastAnswerAt > DRAIN_LIMIT_MS)
          throw new Error(
            `${target}: ${counted} of ${want} requests counted after ${DRAIN_LIMIT_MS} ms`,
          );
      }
      await delay(load ? 50 : 250);
    }
    const finished = await loading; // rethrows a sender's failure
    const { rssMax, depthMax } = watch.stop();
    const cpuAfter = cpuSeconds(hub.pid);
    progress(`${target}: every event aggregated; checking the counters and top lists`);
    await verifyHub(hub, finished.accepted);
    return resultOf(
      target,
      finished,
      doneAt,
      cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
      depthMax,
      rssMax,
    );
  } finally {
    await queue.close();
    await hub.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The naive peer.

async function benchNaive(
  target: TargetName,
  batches: readonly Sent[],
  databaseUrl: string | undefined,
): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'rampart-naive-'));
  const port = await findFreePort();
  const peer = await startServiceProcess({
    name: 'naive-ingest-peer',
    main: new URL('./naive-ingest-peer.ts', import.meta.url).pathname,
    env: {
      ...baseEnvironment(),
      NAIVE_PORT: String(port),
      ...(databaseUrl
        ? { NAIVE_DATABASE_URL: databaseUrl }
        : { NAIVE_SQLITE_FILE: join(dir, 'naive.sqlite') }),
    },
    port,
    readyPath: '/ready',
  });
  try {
    progress(`${target}: peer on ${peer.url}; sending for up to ${SECONDS} s`);
    const cpuBefore = cpuSeconds(peer.pid);
    const watch = sampler(peer.pid);
    const load = await drive(peer.url, 'none', batches);
    const { rssMax } = watch.stop();
    const cpuAfter = cpuSeconds(peer.pid);
    const stored = (await (await fetch(`${peer.url}/count`)).json()) as { events: number };
    const sent = load.accepted.reduce((n, b) => n + b.events, 0);
    if (stored.events !== sent) throw new Error(`${target}: ${stored.events} rows, sent ${sent}`);
    return resultOf(
      target,
      load,
      load.lastAnswerAt,
      cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
      null,
      rssMax,
    );
  } finally {
    await peer.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  progress(`making ${Math.floor(EVENTS / BATCH_EVENTS)} batches of ${BATCH_EVENTS} events`);
  const batches = makeBatches(
    Math.max(1, Math.floor(EVENTS / BATCH_EVENTS)),
    BATCH_EVENTS,
    SECONDS * 1000,
  );
  const gz = batches.reduce((n, b) => n + b.body.length, 0) / batches.length;
  progress(`batches ready (${(gz / 1024).toFixed(1)} KiB gzipped each on average)`);
  let postgres: PostgresServerHandle | undefined;
  const results: Result[] = [];
  if (TRACING) {
    jaeger = await startJaeger();
    progress(`tracing on: the hubs export to Jaeger at ${jaeger.otlpEndpoint}`);
  }
  try {
    for (const target of TARGETS) {
      let url: string | undefined;
      if (target.endsWith('postgres')) {
        postgres ??= await startPostgres({ database: 'rampart_bench' });
        url = await postgres.createDatabase(target.replace('-', '_'));
      }
      const result = target.startsWith('hub')
        ? await benchHub(target, batches, url)
        : await benchNaive(target, batches, url);
      progress(`${target}: ${Math.round(result.eventsPerS)} events/s`);
      results.push(result);
    }
  } finally {
    await postgres?.stop();
    await jaeger?.stop();
  }
  report(results, gz);
}

function report(results: readonly Result[], gzBytes: number): void {
  const of = (name: TargetName) => results.find((r) => r.target === name);
  const round = (n: number | null | undefined, digits = 0) =>
    n === null || n === undefined ? null : Number(n.toFixed(digits));
  const ratio = (a: TargetName, b: TargetName) => {
    const x = of(a);
    const y = of(b);
    return x && y ? round(x.eventsPerS / y.eventsPerS, 2) : null;
  };
  process.stdout.write(
    `bench:ingest: ${SENDERS} senders, batches of ${BATCH_EVENTS} events (${(gzBytes / 1024).toFixed(1)} KiB gzipped), up to ${SECONDS} s of load per target; loopback, one machine\n`,
  );
  process.stdout.write(
    `events/s: from the first POST until every accepted event is aggregated (hub: counted by its traffic API; naive: written before its answer); accepted/s: until the last answer\n\n`,
  );
  const rows = [
    [
      'target',
      'events',
      'seconds',
      'events/s',
      'batches/s',
      'accepted/s',
      'POST p50 ms',
      'p99 ms',
      '429/503',
      'queue max',
      'server cores',
      'RSS max MB',
    ],
    ...results.map((r) => [
      r.target,
      String(r.events),
      r.seconds.toFixed(2),
      String(Math.round(r.eventsPerS)),
      (r.batches / r.seconds).toFixed(0),
      String(Math.round(r.events / r.loadSeconds)),
      r.postP50.toFixed(1),
      r.postP99.toFixed(1),
      String(r.refused),
      r.queueMax === null ? '-' : String(r.queueMax),
      r.serverCores === null ? '-' : r.serverCores.toFixed(2),
      r.serverRssMaxMb === null ? '-' : r.serverRssMaxMb.toFixed(0),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  for (const row of rows)
    process.stdout.write(`${row.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ')}\n`);
  process.stdout.write(
    `\nhub vs naive: SQLite ${ratio('hub-sqlite', 'naive-sqlite') ?? '-'}x, PostgreSQL ${ratio('hub-postgres', 'naive-postgres') ?? '-'}x (server cores: the hub or peer process, not Redis or PostgreSQL)\n`,
  );
  const hub = { sqlite: of('hub-sqlite'), postgres: of('hub-postgres') };
  const figures: Record<string, unknown> = {
    senders: SENDERS,
    batch_events: BATCH_EVENTS,
    load_seconds_max: SECONDS,
    ingest_concurrency: CONCURRENCY === undefined ? 'default' : Number(CONCURRENCY),
    detection: DETECTION,
    dataset_lines_per_file: LINES ?? null,
    events_per_s_sqlite: round(hub.sqlite?.eventsPerS),
    events_per_s_postgres: round(hub.postgres?.eventsPerS),
    ratio_vs_naive_sqlite: ratio('hub-sqlite', 'naive-sqlite'),
    ratio_vs_naive_postgres: ratio('hub-postgres', 'naive-postgres'),
    naive_events_per_s_sqlite: round(of('naive-sqlite')?.eventsPerS),
    naive_events_per_s_postgres: round(of('naive-postgres')?.eventsPerS),
  };
  for (const [db, r] of Object.entries(hub)) {
    figures[`batches_per_s_${db}`] = r ? round(r.batches / r.seconds) : null;
    figures[`accepted_events_per_s_${db}`] = r ? round(r.events / r.loadSeconds) : null;
    figures[`post_ms_p99_${db}`] = round(r?.postP99, 1);
    figures[`queue_depth_max_${db}`] = r?.queueMax ?? null;
    figures[`hub_cores_${db}`] = round(r?.serverCores, 2);
  }
  process.stdout.write(`${JSON.stringify({ ...figures, tracing: TRACING })}\n`);
}

await main();
