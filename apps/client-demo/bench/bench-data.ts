/**
 * The benchmark's snapshots and client addresses, built without a hub.
 *
 * - Data: the ~1.07M real country and ASN ranges of the @ip-location-db packages, imported by
 *   rules-core's bench modules (the same data `npm run bench:lookup` uses).
 * - Rules: rules-core's worst-case rule set (ip allow/block lists, country, ASN and reputation
 *   blocks, 20 pattern rules over every field and match kind), plus the demo's own rules
 *   (`src/waf/demo-rules.ts`: a rate limit on `POST /login` per IP, which does not match the
 *   benchmark's GET, and a monitor-mode pattern rule among them) and a site-wide per-IP rate
 *   limit that counts every request but is never exceeded (the most expensive path through the
 *   limiter): every rule type and both modes are present.
 * - Addresses: 1000 public addresses the rules were drawn around, so every request is looked up
 *   in every range category, compared with every pattern, counted and then passed: the slowest
 *   path through the evaluator, for every request.
 * - Snapshots of versions 1 to {@link VERSIONS}: versions 2 to 4 alternately add and drop one
 *   rule (a rule change: the range tables stay the same, so the client keeps the ones it has),
 *   version 5 changes the reputation list (a data change: its table is loaded anew). The client
 *   starts on version 1 and is made to swap to each following version under load.
 *
 * Results are cached in `apps/client-demo/.bench-cache/` (git-ignored) under a key covering the
 * dataset versions, the snapshot schema and this module's rule additions; delete it to rebuild.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_RULES, type RuleJson } from '@rampart/client-demo/waf/demo-rules';
import { buildReference } from '@rampart/rules-core/bench/accuracy';
import { cacheDigest } from '@rampart/rules-core/bench/build-cache';
import { importDatasets, resolveDatasetFiles } from '@rampart/rules-core/bench/dataset-files';
import { makeInputs, makeWorstCase } from '@rampart/rules-core/bench/probe-inputs';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { SCHEMA_VERSION } from '@rampart/rules-core/snapshot/schema';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';

/** Bump when the rule additions or versions below change, so cached snapshots are rebuilt. */
const RULES_REVISION = 4;
/** Snapshot versions built: the first to start on, the others to swap to. */
export const VERSIONS = 5;

/** What changed from one version to the next. */
export type SnapshotChange = 'rules' | 'data';

/** What version `v` (>= 2) changes from version `v - 1`. */
export function changeOf(version: number): SnapshotChange {
  return version === VERSIONS ? 'data' : 'rules';
}
const PROBE_COUNT = 1000;

export interface BenchData {
  /** The snapshot of version `i + 1` at index `i` (the client starts on version 1). */
  readonly snapshots: readonly string[];
  /** Client addresses that every rule misses (sent as X-Forwarded-For). */
  readonly ips: readonly string[];
  readonly ruleCount: number;
  readonly ruleTypes: readonly string[];
  /** Input ranges over all categories (country + ASN + rule ranges). */
  readonly rangeCount: number;
  readonly built: boolean;
}

interface CachedMeta {
  readonly ruleCount: number;
  readonly ruleTypes: readonly string[];
  readonly rangeCount: number;
}

/**
 * The demo's own rules (among them the login rate limit and a monitor-mode pattern), and a
 * site-wide per-IP rate limit that counts every request but is never exceeded.
 */
const EXTRA_RULES: readonly RuleJson[] = [
  ...DEMO_RULES,
  {
    id: 'rate-site',
    type: 'rate_limit',
    when: [{ field: 'path', match: 'prefix', value: '/' }],
    key: { kind: 'ip' },
    windowSeconds: 60,
    limit: 10_000_000,
    note: 'counts every request, never reached in the benchmark',
  },
];

/** The one rule that even versions add. */
const EVEN_RULE = {
  id: 'v2-no-cgi',
  type: 'pattern',
  action: 'block',
  when: [{ field: 'path', match: 'prefix', value: '/cgi-bin/' }],
};

export function benchCacheDir(): string {
  const dir = fileURLToPath(new URL('../.bench-cache/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Builds (or reuses) the snapshots and addresses; `progress` receives one line per step. */
export async function prepareBenchData(progress: (line: string) => void): Promise<BenchData> {
  const files = resolveDatasetFiles();
  const key = `middleware-s${SCHEMA_VERSION}_${files.cacheKey}_${cacheDigest(
    JSON.stringify(EXTRA_RULES),
    JSON.stringify(EVEN_RULE),
    String(RULES_REVISION),
  )}`;
  const dir = join(benchCacheDir(), key);
  const snapshots = Array.from({ length: VERSIONS }, (_, i) => join(dir, `v${i + 1}.sqlite`));
  const paths = { ips: join(dir, 'ips.json'), meta: join(dir, 'meta.json') };
  if (existsSync(paths.meta)) {
    const meta = JSON.parse(readFileSync(paths.meta, 'utf8')) as CachedMeta;
    progress(`reusing snapshots from ${dir}`);
    return {
      snapshots,
      ips: JSON.parse(readFileSync(paths.ips, 'utf8')) as string[],
      ...meta,
      built: false,
    };
  }

  progress(
    `importing ${files.country.name}@${files.country.version} and ${files.asn.name}@${files.asn.version}`,
  );
  const data = await importDatasets(files);
  progress(`imported ${data.country.length} country and ${data.asn.length} ASN ranges`);
  const refs = {
    country: buildReference(data.country.map((e) => e.range)),
    asn: buildReference(data.asn.map((e) => e.range)),
  };
  const inputs = makeInputs([PROBE_COUNT], data, refs);
  const worst = makeWorstCase(inputs);
  const ips = inputs.sets[0] ?? [];
  const rules1 = [...worst.ruleSetJson.rules, ...EXTRA_RULES];
  const rules2 = [...rules1, EVEN_RULE];
  const datasets = {
    country: `${files.country.name}@${files.country.version}`,
    asn: `${files.asn.name}@${files.asn.version}`,
  };

  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  let rangeCount = 0;
  // The data change: the first reputation list without its last range.
  const changedReputation = worst.reputation.map((list, i) =>
    i === 0 ? { ...list, ranges: list.ranges.slice(0, -1) } : list,
  );
  for (let version = 1; version <= VERSIONS; version++) {
    const rules = version % 2 === 1 ? rules1 : rules2;
    const reputation = changeOf(version) === 'data' ? changedReputation : worst.reputation;
    progress(`writing snapshot version ${version} (${rules.length} rules)`);
    const summary = writeSnapshot(join(building, `v${version}.sqlite`), {
      ruleSet: parseRuleSet({ rules }),
      country: data.country,
      asn: data.asn,
      reputation,
      version,
      datasets,
    });
    rangeCount = summary.rangeCount;
  }
  const meta: CachedMeta = {
    ruleCount: rules1.length,
    ruleTypes: [...new Set(rules1.map((r) => String(r.type)))],
    rangeCount,
  };
  writeFileSync(join(building, 'ips.json'), JSON.stringify(ips));
  writeFileSync(join(building, 'meta.json'), JSON.stringify(meta));
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  return { snapshots, ips, ...meta, built: true };
}
