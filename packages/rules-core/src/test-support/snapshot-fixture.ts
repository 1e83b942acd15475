/**
 * Builds real snapshot files in a temporary folder for tests (no mocks: the same writer and
 * reader the product uses).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AsnEntry, CountryEntry, ReputationList } from '../datasets/dataset.js';
import { parseIpRange } from '../ip/range.js';
import { type ProxyConfig, parseProxyConfig } from '../proxy-config/proxy-config.js';
import { parseRuleSet } from '../rules/validate.js';
import { openSnapshot, type Snapshot } from '../snapshot/reader.js';
import { writeSnapshot } from '../snapshot/writer.js';

export interface FixtureInput {
  readonly rules: unknown[];
  /** `[range text, country code]` pairs. */
  readonly country?: readonly (readonly [string, string])[];
  /** `[range text, asn, org]` triples. */
  readonly asn?: readonly (readonly [string, number, string])[];
  /** list name -> range texts. */
  readonly reputation?: Readonly<Record<string, readonly string[]>>;
  readonly version?: number;
  /** A prexy configuration document (validated with `parseProxyConfig` before it is stored). */
  readonly proxyConfig?: unknown;
}

export function temporaryDirectory(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes a snapshot from compact test data and returns its path. */
export function writeFixture(dir: string, input: FixtureInput, name = 'snapshot.sqlite'): string {
  const path = join(dir, name);
  const country: CountryEntry[] = (input.country ?? []).flatMap(([text, code]) =>
    parseIpRange(text).map((range) => ({ range, country: code })),
  );
  const asn: AsnEntry[] = (input.asn ?? []).flatMap(([text, number, org]) =>
    parseIpRange(text).map((range) => ({ range, asn: number, org })),
  );
  const reputation: ReputationList[] = Object.entries(input.reputation ?? {}).map(
    ([name, texts]) => ({
      name,
      ranges: texts.flatMap((t) => parseIpRange(t)),
    }),
  );
  let proxyConfig: ProxyConfig | undefined;
  if (input.proxyConfig !== undefined) {
    const parsed = parseProxyConfig(input.proxyConfig);
    if (!parsed.ok) throw new Error(`fixture proxyConfig: ${JSON.stringify(parsed.issues)}`);
    proxyConfig = parsed.config;
  }
  writeSnapshot(path, {
    ...(proxyConfig === undefined ? {} : { proxyConfig }),
    ruleSet: parseRuleSet({ rules: input.rules }),
    country,
    asn,
    reputation,
    version: input.version ?? 7,
  });
  return path;
}

/** Writes and opens a snapshot; the caller closes it. */
export async function openFixture(dir: string, input: FixtureInput): Promise<Snapshot> {
  return openSnapshot(writeFixture(dir, input));
}
