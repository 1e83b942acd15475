/**
 * Finds and imports the benchmark's public datasets: the IPv4 and IPv6 CSV files of the npm
 * packages @ip-location-db/geo-whois-asn-country (country per range) and @ip-location-db/asn (AS
 * number per range), about 1.07 million ranges in all.
 *
 * Files are located through the package resolver, so the benchmark reads whatever version the
 * lockfile installed, and that version keys the build caches. A missing package or file stops the
 * run with a message naming what to install; it never silently benchmarks less data.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AsnEntry, CountryEntry } from '@rampart/rules-core/datasets/dataset';
import {
  importAsnCsvFile,
  importCountryCsvFile,
} from '@rampart/rules-core/datasets/ip-location-db';

export interface DatasetPackage {
  readonly name: string;
  readonly version: string;
  /** Absolute paths of the text-address CSV files, IPv4 first. */
  readonly files: readonly [ipv4: string, ipv6: string];
}

export interface DatasetFiles {
  readonly country: DatasetPackage;
  readonly asn: DatasetPackage;
  /** A file-name-safe key naming both package versions, for caches. */
  readonly cacheKey: string;
}

const COUNTRY_PACKAGE = '@ip-location-db/geo-whois-asn-country';
const ASN_PACKAGE = '@ip-location-db/asn';

/** Locates both packages and their four CSV files; throws a clear error when one is missing. */
export function resolveDatasetFiles(): DatasetFiles {
  const country = resolvePackage(COUNTRY_PACKAGE);
  const asn = resolvePackage(ASN_PACKAGE);
  return { country, asn, cacheKey: `country-${country.version}_asn-${asn.version}` };
}

function resolvePackage(name: string): DatasetPackage {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
  } catch {
    throw new Error(
      `dataset package ${name} is not installed (it is a devDependency of @rampart/rules-core: run npm ci)`,
    );
  }
  const folder = dirname(manifest);
  const version = String(
    (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version,
  );
  // `asn-ipv4.csv` holds dotted addresses; `asn-ipv4-num.csv` the same ranges as integers.
  const base = name.slice(name.indexOf('/') + 1);
  const files = [`${base}-ipv4.csv`, `${base}-ipv6.csv`].map((file) => join(folder, file));
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    const present = readdirSync(folder).filter((f) => f.endsWith('.csv'));
    throw new Error(
      `dataset file(s) missing from ${name}@${version}: ${missing.join(', ')} (the folder has: ${present.join(', ') || 'no CSV files'})`,
    );
  }
  return { name, version, files: files as [string, string] };
}

export interface ImportedDatasets {
  readonly country: CountryEntry[];
  readonly asn: AsnEntry[];
  /** Lines the importers skipped, with their reasons (expected to be none). */
  readonly skipped: readonly string[];
}

/**
 * Imports all four files. `limitPerFile` keeps only the first entries of each file: a quick
 * development run, never the published figure.
 */
export async function importDatasets(
  files: DatasetFiles,
  limitPerFile?: number,
): Promise<ImportedDatasets> {
  const [country4, country6, asn4, asn6] = await Promise.all([
    importCountryCsvFile(files.country.files[0]),
    importCountryCsvFile(files.country.files[1]),
    importAsnCsvFile(files.asn.files[0]),
    importAsnCsvFile(files.asn.files[1]),
  ]);
  const take = <T>(entries: T[]) =>
    limitPerFile === undefined ? entries : entries.slice(0, limitPerFile);
  const skipped = [country4, country6, asn4, asn6].flatMap((r) =>
    r.issues.map((i) => `${i.file}:${i.line}: ${i.reason}`),
  );
  return {
    country: [...take(country4.entries), ...take(country6.entries)],
    asn: [...take(asn4.entries), ...take(asn6.entries)],
    skipped,
  };
}
