/**
 * `npm run bench:sync`: a stampede the hub must survive. The real hub (with its Redis, through
 * `@rampart/test-services/hub`) serves a site whose snapshot carries the full public datasets
 * (the ~1.07M country and ASN ranges of `@ip-location-db`, uploaded through the datasets API).
 * A few hundred simulated clients on loopback each hold a blocking poll
 * (`GET /v1/snapshot/version?wait=30s`) for the version they run, as waf-clients do; then:
 *
 * 1. a rule change is published: every client is answered, fetches the page delta it is offered
 *    (one of them applies it to the previous file and checks the result is the new file, byte
 *    for byte) and holds its next poll;
 * 2. a dataset change (the ASN list with one range less) is published the same way.
 *
 * Measured: from the publication (the snapshot row's creation time) to each client having the
 * new version's bytes, as p50 / p99 / max; the bytes each client downloaded (over the wire,
 * gzipped) for each change against the whole snapshot; the hub's resident memory before and at
 * its peak during the stampedes. Prints a table, then one JSON line.
 *
 * Knobs (development only): BENCH_CLIENTS (default 300), BENCH_DATASET_LINES (only the first N
 * lines of each dataset file: a quick run, never the published figure).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { resolveDatasetFiles } from '@rampart/rules-core/bench/dataset-files';
import { applyPageDelta } from '@rampart/rules-core/snapshot/page-delta';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { datasetBody, uploadDataset } from './hub-datasets.ts';

const CLIENTS = positiveInt('BENCH_CLIENTS', 300);
const LINES = process.env.BENCH_DATASET_LINES ? positiveInt('BENCH_DATASET_LINES', 1) : undefined;
const SITE = 'bench';
const WAIT = '30s';

function positiveInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name}: ${JSON.stringify(text)} is not a positive integer`);
  return value;
}

const started = performance.now();
function progress(message: string): void {
  process.stderr.write(
    `[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`,
  );
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The body as received (still gzipped when the hub gzipped it). */
  readonly body: Buffer;
}

/** One keep-alive connection per simulated client, as each instance of a fleet has its own. */
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

function get(url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** A site-key request to the hub; gzip accepted, as the client accepts it. */
const siteGet = (hub: Hub, key: string, path: string, etag?: string) =>
  get(`${hub.url}${path}`, {
    authorization: `Bearer ${key}`,
    'accept-encoding': 'gzip',
    ...(etag ? { 'if-none-match': etag } : {}),
  });

/** The hub process's resident memory, in MB (Linux). */
function rssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface Version {
  readonly version: number;
  readonly sha256: string;
  readonly createdAt: string;
}

async function latest(hub: Hub): Promise<Version> {
  const [newest] = await hub.admin<Version[]>('GET', `/v1/sites/${SITE}/snapshots`);
  if (!newest) throw new Error('the site has no snapshot');
  return newest;
}

/** What one simulated client did for one change. */
interface Fetched {
  readonly at: number;
  readonly bytes: number;
  readonly via: 'delta' | 'full';
}

/**
 * Holds a blocking poll for `etag` and, once answered with a new version, fetches the delta
 * (or the whole file) as the client would. `check` (one client) also rebuilds the new file.
 */
async function holdAndFetch(
  hub: Hub,
  key: string,
  etag: string,
  check: { base: Buffer; target: (sha: string) => Promise<Buffer> } | null,
): Promise<Fetched> {
  for (;;) {
    const lookup = await siteGet(hub, key, `/v1/snapshot/version?wait=${WAIT}`, etag);
    if (lookup.status === 304) continue; // the wait ended first: poll again
    if (lookup.status !== 200) throw new Error(`lookup answered ${lookup.status}`);
    const json =
      lookup.headers['content-encoding'] === 'gzip' ? gunzipSync(lookup.body) : lookup.body;
    const answer = JSON.parse(json.toString('utf8')) as {
      sha256: string;
      url: string;
      delta: { url: string } | null;
    };
    const path = answer.delta?.url ?? answer.url;
    const fetched = await siteGet(hub, key, path);
    const at = Date.now();
    if (fetched.status !== 200) throw new Error(`GET ${path} answered ${fetched.status}`);
    if (check && answer.delta) {
      const raw =
        fetched.headers['content-encoding'] === 'gzip' ? gunzipSync(fetched.body) : fetched.body;
      const rebuilt = applyPageDelta(check.base, raw);
      if (!rebuilt.equals(await check.target(answer.sha256)))
        throw new Error('the rebuilt file differs from the new version');
    }
    return {
      at,
      bytes: fetched.body.length + lookup.body.length,
      via: answer.delta ? 'delta' : 'full',
    };
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

interface Stampede {
  readonly label: string;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly bytesPerClient: number;
  readonly viaDelta: number;
  readonly rssPeakMb: number;
}

/** Every client holds a poll for the current version; `change()` publishes the next one. */
async function stampede(
  hub: Hub,
  key: string,
  label: string,
  change: () => Promise<void>,
): Promise<Stampede> {
  const before = await latest(hub);
  const etag = `"${before.sha256}"`;
  const whole = async (sha: string) => {
    const answer = await siteGet(hub, key, `/v1/snapshots/${sha}`);
    return answer.headers['content-encoding'] === 'gzip' ? gunzipSync(answer.body) : answer.body;
  };
  const base = await whole(before.sha256);
  const fetches = Array.from({ length: CLIENTS }, (_, i) =>
    holdAndFetch(hub, key, etag, i === 0 ? { base, target: whole } : null),
  );
  for (let i = 0; ; i++) {
    const held = (await hub.admin<{ heldPolls: number }>('GET', '/v1/metrics')).heldPolls;
    if (held >= CLIENTS) break;
    if (i > 600) throw new Error(`only ${held} of ${CLIENTS} polls were held`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  progress(`${label}: ${CLIENTS} polls held; publishing`);
  let rssPeakMb = rssMb(hub.pid);
  const sampler = setInterval(() => {
    rssPeakMb = Math.max(rssPeakMb, rssMb(hub.pid));
  }, 50);
  try {
    await change();
    const results = await Promise.all(fetches);
    const after = await latest(hub);
    if (after.version === before.version) throw new Error(`${label}: no new version was published`);
    const publishedAt = Date.parse(after.createdAt);
    const lags = results.map((r) => r.at - publishedAt).sort((a, b) => a - b);
    const bytes = results.reduce((n, r) => n + r.bytes, 0) / results.length;
    const stats: Stampede = {
      label,
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      max: lags.at(-1) ?? Number.NaN,
      bytesPerClient: Math.round(bytes),
      viaDelta: results.filter((r) => r.via === 'delta').length,
      rssPeakMb,
    };
    progress(`${label}: all ${CLIENTS} clients have version ${after.version}`);
    return stats;
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const files = resolveDatasetFiles();
  const hub = await startHub({
    env: { HUB_MAX_HELD_POLLS: String(CLIENTS * 2), HUB_LOG_LEVEL: 'warn' },
  });
  try {
    progress(
      `hub on ${hub.url}; uploading ${files.country.name} and ${files.asn.name}${LINES ? ` (first ${LINES} lines each)` : ''}`,
    );
    await uploadDataset(hub, 'country', 'geo-v4', datasetBody(files.country.files[0], LINES));
    await uploadDataset(hub, 'country', 'geo-v6', datasetBody(files.country.files[1], LINES));
    await uploadDataset(hub, 'asn', 'asn-v6', datasetBody(files.asn.files[1], LINES));
    const asn4 = datasetBody(files.asn.files[0], LINES);
    await uploadDataset(hub, 'asn', 'asn-v4', asn4);
    const key = await hub.createSite(SITE);
    await hub.addRule(SITE, {
      id: 'no-wp',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    });
    progress('version 1 built');
    const v1 = await latest(hub);
    const full = await siteGet(hub, key, `/v1/snapshots/${v1.sha256}`);
    const fullGzip = full.body.length;
    const fullRaw = gunzipSync(full.body).length;
    const rssBeforeMb = rssMb(hub.pid);

    const rule = await stampede(hub, key, 'rule change', async () => {
      await hub.admin('POST', `/v1/sites/${SITE}/rules`, {
        id: 'auto-block-1',
        type: 'ip',
        action: 'block',
        ranges: ['203.0.113.7'],
        note: 'what an automatic block adds',
      });
    });
    const lines = asn4.toString('utf8').trimEnd().split('\n');
    const data = await stampede(hub, key, 'dataset change', () =>
      uploadDataset(hub, 'asn', 'asn-v4', `${lines.slice(0, -1).join('\n')}\n`),
    );
    const rssAfterMb = rssMb(hub.pid);

    const mb = (n: number) => (n / 1e6).toFixed(2);
    process.stdout.write(
      `bench:sync: ${CLIENTS} clients holding blocking polls on one hub (SQLite, loopback); snapshot ${mb(fullRaw)} MB (${mb(fullGzip)} MB gzip)\n\n`,
    );
    const rows = [
      [
        'change',
        'publish to client p50 ms',
        'p99 ms',
        'max ms',
        'bytes per client',
        'share of gzip file',
        'by delta',
        'hub RSS peak MB',
      ],
      ...[rule, data].map((s) => [
        s.label,
        String(s.p50),
        String(s.p99),
        String(s.max),
        String(s.bytesPerClient),
        `${((100 * s.bytesPerClient) / fullGzip).toFixed(2)}%`,
        `${s.viaDelta}/${CLIENTS}`,
        s.rssPeakMb.toFixed(0),
      ]),
    ];
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    for (const row of rows)
      process.stdout.write(`${row.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ')}\n`);
    process.stdout.write(
      `\nhub RSS: ${rssBeforeMb.toFixed(0)} MB before the stampedes, ${Math.max(rule.rssPeakMb, data.rssPeakMb).toFixed(0)} MB at the peak, ${rssAfterMb.toFixed(0)} MB after\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        clients: CLIENTS,
        dataset_lines_per_file: LINES ?? null,
        publish_to_all_ms_p50: rule.p50,
        publish_to_all_ms_p99: rule.p99,
        publish_to_all_ms_max: rule.max,
        rule_change_bytes_per_client: rule.bytesPerClient,
        data_change_bytes_per_client: data.bytesPerClient,
        data_change_publish_to_all_ms_p99: data.p99,
        full_snapshot_bytes: fullRaw,
        full_snapshot_bytes_gzip: fullGzip,
        rule_change_share_of_full: Number((rule.bytesPerClient / fullRaw).toFixed(5)),
        hub_rss_mb_before: Math.round(rssBeforeMb),
        hub_rss_mb_peak: Math.round(Math.max(rule.rssPeakMb, data.rssPeakMb)),
      })}\n`,
    );
  } finally {
    agent.destroy();
    await hub.close();
  }
}

await main();
