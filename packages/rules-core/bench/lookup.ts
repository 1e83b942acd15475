/**
 * `npm run bench:lookup`: the seed article's SQLite-vs-Redis range-lookup protocol on real public
 * data, with Rampart's evaluator as the third contender.
 *
 * 1. Import ~1.07M country and ASN ranges (IPv4 + IPv6) from the @ip-location-db packages.
 * 2. Build (or reuse from `.bench-cache/`) the anchor's lexical-decimal tables in SQLite, load the
 *    same members into sorted sets of a redis-server started here on loopback, and build (or
 *    reuse) a Rampart snapshot holding the same data plus a worst-case rule set.
 * 3. For IP sets of 1k, 10k and 100k deterministic random addresses, run each set 5 times through
 *    each implementation in the same order and average (the seed's protocol).
 * 4. In a child process, open the snapshot as a client would: event-loop stalls and RSS.
 * 5. Print a table, then one JSON line (the last line of stdout) for scripts.
 *
 * Progress goes to stderr. Development knobs (never for published figures):
 * BENCH_SIZES=1000,10000  BENCH_RUNS=1  BENCH_RANGE_LIMIT=50000 (first N entries per file).
 */
import { performance } from 'node:perf_hooks';
import { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { openSnapshot } from '@rampart/rules-core/snapshot/reader';
import { SCHEMA_VERSION } from '@rampart/rules-core/snapshot/schema';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';
import { startRedisServer } from '@rampart/test-services/redis-server';
import { Redis } from 'ioredis';
import { buildReference } from './accuracy.ts';
import { cacheDigest, cachedFile } from './build-cache.ts';
import {
  type DatasetFiles,
  type ImportedDatasets,
  importDatasets,
  resolveDatasetFiles,
} from './dataset-files.ts';
import {
  accuracyOf,
  type Contenders,
  concatFloat64,
  measureSize,
  mergeAccuracy,
  rangeStartAccuracy,
  type SizeOutcome,
  sameIds,
  TABLES,
  warmUp,
} from './passes.ts';
import {
  type Inputs,
  makeInputs,
  makeWorstCase,
  missingBlockedNetworks,
  type References,
} from './probe-inputs.ts';
import { type BenchResults, formatReport, summarize } from './report.ts';
import { runLoadProbes } from './run-load-probe.ts';
import { summarize as summarizeSamples } from './stats.ts';
import { loadWafrisRedis } from './wafris-redis.ts';
import { buildWafrisSqlite, openWafrisSqlite, type WafrisTable } from './wafris-sqlite.ts';
import { rangeText, type WorstCase } from './worst-case-rules.ts';

/** Fresh processes the snapshot load is measured in (the median run is reported). */
const LOAD_PROBE_RUNS = 5;
/** Bump when the Wafris table layout changes, so cached databases are rebuilt. */
const WAFRIS_LAYOUT_VERSION = 1;

interface Config {
  readonly sizes: readonly number[];
  readonly runs: number;
  readonly rangeLimit: number | undefined;
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  const sizes = (env.BENCH_SIZES ?? '1000,10000,100000')
    .split(',')
    .map((s) => positiveInt(s, 'BENCH_SIZES'));
  const runs = positiveInt(env.BENCH_RUNS ?? '5', 'BENCH_RUNS');
  const rangeLimit = env.BENCH_RANGE_LIMIT
    ? positiveInt(env.BENCH_RANGE_LIMIT, 'BENCH_RANGE_LIMIT')
    : undefined;
  return { sizes, runs, rangeLimit };
}

function positiveInt(text: string, name: string): number {
  const value = Number(text.trim());
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

function collectGarbage(): void {
  globalThis.gc?.();
}

/** A missing blocked network fails a full run (see `missingBlockedNetworks`); a limited one warns. */
function checkBlockedNetworks(config: Config, data: ImportedDatasets): void {
  const missing = missingBlockedNetworks(data);
  if (missing.length === 0) return;
  const message = `blocked networks absent from the dataset: ${missing.join(', ')}`;
  if (config.rangeLimit === undefined) throw new Error(message);
  progress(`warning: ${message}`);
}

function wafrisTables(data: ImportedDatasets): WafrisTable[] {
  return [
    { name: 'country', ranges: data.country.map((e) => e.range) },
    { name: 'asn', ranges: data.asn.map((e) => e.range) },
  ];
}

async function buildCaches(
  files: DatasetFiles,
  config: Config,
  data: ImportedDatasets,
  worst: WorstCase,
) {
  const dataKey = `${files.cacheKey}_${config.rangeLimit ?? 'all'}`;
  const wafris = await cachedFile(`wafris-v${WAFRIS_LAYOUT_VERSION}_${dataKey}.sqlite`, (path) =>
    buildWafrisSqlite(path, wafrisTables(data)),
  );
  progress(`Wafris SQLite tables ${wafris.built ? 'built' : 'reused'}: ${wafris.path}`);
  const ruleSet = parseRuleSet(worst.ruleSetJson);
  const rulesKey = cacheDigest(
    JSON.stringify(worst.ruleSetJson),
    ...worst.reputation.map((list) => `${list.name}:${list.ranges.map(rangeText).join(',')}`),
  );
  const snapshot = await cachedFile(
    `snapshot-s${SCHEMA_VERSION}_${dataKey}_${rulesKey}.sqlite`,
    (path) => {
      writeSnapshot(path, {
        ruleSet,
        country: data.country,
        asn: data.asn,
        reputation: worst.reputation,
        version: 1,
        datasets: {
          country: `${files.country.name}@${files.country.version}`,
          asn: `${files.asn.name}@${files.asn.version}`,
        },
      });
    },
  );
  progress(`Rampart snapshot ${snapshot.built ? 'built' : 'reused'}: ${snapshot.path}`);
  return { wafrisPath: wafris.path, snapshotPath: snapshot.path };
}

/** Everything the timed part needs; the imported dataset itself is not kept. */
interface Prepared {
  readonly ranges: { readonly country: number; readonly asn: number };
  readonly refs: References;
  readonly inputs: Inputs;
  readonly wafrisPath: string;
  readonly snapshotPath: string;
}

/**
 * Imports the data, builds (or reuses) the SQLite file and the snapshot and loads Redis. The
 * million imported entries (objects holding bigints) become garbage when this returns, so that
 * the timed passes run with a heap like a client's, not one holding the whole dataset.
 */
async function prepare(config: Config, redis: Redis): Promise<Prepared> {
  const files = resolveDatasetFiles();
  progress(
    `importing ${files.country.name}@${files.country.version} and ${files.asn.name}@${files.asn.version}`,
  );
  const data = await importDatasets(files, config.rangeLimit);
  if (data.skipped.length > 0)
    progress(`importers skipped ${data.skipped.length} lines, e.g. ${data.skipped[0]}`);
  progress(`imported ${data.country.length} country and ${data.asn.length} ASN ranges`);
  checkBlockedNetworks(config, data);
  const refs: References = {
    country: buildReference(data.country.map((e) => e.range)),
    asn: buildReference(data.asn.map((e) => e.range)),
  };
  const inputs = makeInputs(config.sizes, data, refs);
  const worst = makeWorstCase(inputs);
  const { wafrisPath, snapshotPath } = await buildCaches(files, config, data, worst);
  progress('loading the Wafris members into Redis sorted sets');
  await loadWafrisRedis(redis, wafrisTables(data));
  progress('sorted sets loaded');
  return {
    ranges: { country: data.country.length, asn: data.asn.length },
    refs,
    inputs,
    wafrisPath,
    snapshotPath,
  };
}

/** Warms up, times every set, checks the anchor's answers and runs the load probe. */
async function measure(config: Config, prepared: Prepared, redis: Redis): Promise<BenchResults> {
  const { inputs, refs } = prepared;
  const sqlite = openWafrisSqlite(prepared.wafrisPath, TABLES);
  const snapshot = await openSnapshot(prepared.snapshotPath);
  try {
    // The memos are off: the passes repeat the same addresses and the worst-case request, and
    // this benchmark compares lookups and evaluation, not how well a memo does on repeated
    // traffic.
    const evaluator = new Evaluator(snapshot, { addressMemo: 0, fieldMemo: 0 });
    const contenders: Contenders = { sqlite, redis, evaluator };
    collectGarbage();
    await warmUp(contenders, inputs.warmup);
    const outcomes: SizeOutcome[] = [];
    for (const ips of inputs.sets) {
      progress(`measuring ${ips.length} IPs x ${config.runs} passes`);
      outcomes.push(await measureSize(contenders, ips, config.runs));
    }
    progress('checking anchor answers against exact lookups');
    const anchorRandom = mergeAccuracy(
      outcomes.map((o, i) => accuracyOf(inputs.sets[i] ?? [], o.sqliteIds, refs)),
    );
    const anchorRangeStarts = rangeStartAccuracy(contenders, inputs, refs);
    progress('loading the snapshot in a child process');
    const load = await runLoadProbes(prepared.snapshotPath, LOAD_PROBE_RUNS);
    return {
      ranges: prepared.ranges,
      runs: config.runs,
      sizes: outcomes.map((o) => o.measurements),
      rampartAllCalls: summarizeSamples(concatFloat64(outcomes.map((o) => o.calls))),
      notPassed: outcomes.reduce((n, o) => n + o.notPassed, 0),
      load,
      anchorRandom,
      anchorRangeStarts,
      sqliteRedisAgree: outcomes.every((o) => sameIds(o.sqliteIds, o.redisIds)),
    };
  } finally {
    snapshot.close();
    sqlite.close();
  }
}

async function main(): Promise<void> {
  if (!globalThis.gc) throw new Error('run with node --expose-gc (npm run bench:lookup does)');
  const config = readConfig(process.env);
  const redisServer = await startRedisServer();
  try {
    progress(`redis-server started on port ${redisServer.port}`);
    const redis = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    try {
      const results = await measure(config, await prepare(config, redis), redis);
      process.stdout.write(`${formatReport(results)}\n${JSON.stringify(summarize(results))}\n`);
    } finally {
      await redis.quit().catch(() => undefined);
    }
  } finally {
    await redisServer.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:lookup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
