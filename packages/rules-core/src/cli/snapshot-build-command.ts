/**
 * `rampart snapshot build`: rules + datasets -> one snapshot file, all or nothing.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { importCidrListFile } from '../datasets/cidr-list.js';
import type { ImportIssue } from '../datasets/dataset.js';
import { DatasetImportError } from '../datasets/dataset.js';
import { importAsnCsvFile, importCountryCsvFile } from '../datasets/ip-location-db.js';
import type { RuleSet } from '../rules/model.js';
import { parseRuleSet, RuleValidationError } from '../rules/validate.js';
import { SnapshotBuildError, writeSnapshot } from '../snapshot/writer.js';
import { type CliIo, dataError, noInputError, usageError } from './cli-error.js';
import { parseOptions } from './parse-options.js';
import type { CommandSpec } from './usage.js';

export const SNAPSHOT_BUILD = {
  name: 'snapshot build',
  summary: 'build a snapshot file from a rule set and IP datasets, all or nothing',
  options: {
    rules: {
      type: 'string',
      value: 'RULES.json',
      required: true,
      description: 'the rule set, {"rules": [...]}; all its problems are reported',
    },
    country: {
      type: 'string',
      value: 'CSV',
      multiple: true,
      description: 'country ranges, @ip-location-db format: start,end,CC',
    },
    asn: {
      type: 'string',
      value: 'CSV',
      multiple: true,
      description: 'AS ranges, @ip-location-db format: start,end,asn,org',
    },
    reputation: {
      type: 'string',
      value: 'LIST',
      multiple: true,
      description:
        'a list of CIDRs or addresses, one a line (# and ; comments), named after the file',
    },
    version: {
      type: 'string',
      value: 'N',
      description: 'the snapshot version, a positive integer (default: the current Unix time)',
    },
    'skip-bad-lines': {
      type: 'boolean',
      description: 'skip dataset lines that do not parse (listed on stderr) instead of failing',
    },
    out: {
      type: 'string',
      value: 'FILE',
      required: true,
      description: 'the snapshot to write, atomically: complete or not at all',
    },
  },
  notes: [
    'Prints a summary of the snapshot written as JSON on stdout.',
    'A bad dataset line stops the build, naming file:line, unless --skip-bad-lines is given. A rule naming a reputation list the build was not given is an error.',
  ],
  examples: [
    'rampart snapshot build --rules rules.json --country geo.csv --reputation drop.txt --out site.sqlite',
  ],
} as const satisfies CommandSpec;

export async function snapshotBuildCommand(argv: readonly string[], io: CliIo): Promise<void> {
  const { values } = parseOptions(argv, SNAPSHOT_BUILD);
  const rulesPath = values.rules;
  const out = values.out;
  const version =
    values.version === undefined ? Math.floor(Date.now() / 1000) : Number(values.version);
  if (!Number.isSafeInteger(version) || version < 1)
    throw usageError('--version must be a positive integer');
  const onBadLine = values['skip-bad-lines'] ? 'skip' : 'reject';
  const issues: ImportIssue[] = [];
  const datasets: Record<string, string> = {};

  const ruleSet = await readRuleSet(rulesPath);
  const importEach = async <R extends { issues: ImportIssue[] }>(
    kind: string,
    paths: readonly string[] | undefined,
    load: (path: string) => Promise<R>,
    describe: (result: R, path: string) => [name: string, summary: string],
  ): Promise<R[]> => {
    const results: R[] = [];
    for (const path of paths ?? []) {
      const result = await importing(() => load(path));
      for (const issue of result.issues) issues.push(issue);
      const [name, summary] = describe(result, path);
      datasets[`${kind}:${name}`] = summary;
      results.push(result);
    }
    return results;
  };
  const ranges = (n: number, path: string) => `${n} ranges from ${basename(path)}`;
  const country = (
    await importEach(
      'country',
      values.country,
      (p) => importCountryCsvFile(p, { file: p, onBadLine }),
      (r, p) => [basename(p), ranges(r.entries.length, p)],
    )
  ).flatMap((r) => r.entries);
  const asn = (
    await importEach(
      'asn',
      values.asn,
      (p) => importAsnCsvFile(p, { file: p, onBadLine }),
      (r, p) => [basename(p), ranges(r.entries.length, p)],
    )
  ).flatMap((r) => r.entries);
  const reputation = (
    await importEach(
      'reputation',
      values.reputation,
      (p) => importCidrListFile(p, { file: p, onBadLine }),
      (r, p) => [r.list.name, ranges(r.list.ranges.length, p)],
    )
  ).map((r) => r.list);

  let summary: ReturnType<typeof writeSnapshot>;
  try {
    summary = writeSnapshot(out, { ruleSet, country, asn, reputation, version, datasets });
  } catch (error) {
    if (error instanceof SnapshotBuildError) throw dataError(error.message);
    throw error;
  }
  for (const issue of issues.slice(0, 10)) {
    io.stderr.write(`rampart: skipped ${issue.file}:${issue.line}: ${issue.reason}\n`);
  }
  if (issues.length > 10)
    io.stderr.write(`rampart: skipped ${issues.length - 10} more bad lines\n`);
  io.stdout.write(`${JSON.stringify({ ...summary, skippedLines: issues.length })}\n`);
}

async function readRuleSet(path: string): Promise<RuleSet> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw noInputError(
      `cannot read --rules ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw dataError(`${path}: not valid JSON: ${(error as Error).message}`);
  }
  try {
    return parseRuleSet(json);
  } catch (error) {
    if (error instanceof RuleValidationError) throw dataError(`${path}: ${error.message}`);
    throw error;
  }
}

/** Runs an import, turning file-system and bad-data errors into CLI errors. */
async function importing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DatasetImportError)
      throw dataError(`${error.message} (use --skip-bad-lines to skip them)`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR')
      throw noInputError((error as Error).message);
    throw error;
  }
}
