/**
 * Worker-thread entry of a snapshot build: importing a million dataset lines and flattening them
 * takes seconds of CPU, which must not block the hub's event loop (health checks, API, BullMQ
 * lock renewals). Receives a {@link BuildInput}, posts a {@link BuildOutput}.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { importCidrListFile } from '@rampart/rules-core/datasets/cidr-list';
import type { AsnEntry, CountryEntry, ReputationList } from '@rampart/rules-core/datasets/dataset';
import {
  importAsnCsvFile,
  importCountryCsvFile,
} from '@rampart/rules-core/datasets/ip-location-db';
import {
  describeProxyConfigIssues,
  type ProxyConfig,
  parseProxyConfig,
} from '@rampart/rules-core/proxy-config/proxy-config';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';
import { postResult } from '../workers/run-worker.js';
import { BuildInput, BuildOutput } from './build-io.js';

/**
 * The stored document, validated here (off the hub's event loop): one that no longer validates
 * fails the build with the reason rather than ship what no proxy could load.
 */
function proxyConfigOf(input: BuildInput): { proxyConfig?: ProxyConfig } {
  if (input.proxyConfig === undefined) return {};
  const parsed = parseProxyConfig(input.proxyConfig);
  if (!parsed.ok) {
    throw new Error(
      `the stored proxy configuration no longer validates: ${describeProxyConfigIssues(parsed.issues)}`,
    );
  }
  return { proxyConfig: parsed.config };
}

async function build(input: BuildInput): Promise<BuildOutput> {
  const ruleSet = parseRuleSet({ rules: input.rules });
  const country: CountryEntry[] = [];
  const asn: AsnEntry[] = [];
  const reputation: ReputationList[] = [];
  const provenance: Record<string, string> = {};
  for (const d of input.datasets) {
    provenance[`${d.kind}:${d.name}`] = d.sha256;
    if (d.kind === 'country')
      append(country, (await importCountryCsvFile(d.path, { file: d.name })).entries);
    if (d.kind === 'asn') append(asn, (await importAsnCsvFile(d.path, { file: d.name })).entries);
    if (d.kind === 'reputation') {
      const { list } = await importCidrListFile(d.path, { file: d.name, name: d.name });
      reputation.push(list);
    }
  }
  const summary = writeSnapshot(input.outPath, {
    ruleSet,
    country,
    asn,
    reputation,
    version: input.version,
    datasets: provenance,
    signalKey: input.signalKey,
    ...proxyConfigOf(input),
  });
  return {
    sha256: await sha256File(input.outPath),
    bytes: summary.bytes,
    rangeCount: summary.rangeCount,
  };
}

/** `target.push(...items)` without the argument-count limit (datasets have ~500k entries). */
function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

build(workerData as BuildInput).then(
  (output) => postResult({ ok: true, output }),
  (error: unknown) => postResult({ ok: false, error: (error as Error).message ?? String(error) }),
);
