/**
 * `rampart snapshot inspect FILE`: verifies a snapshot the way a client would and prints what it
 * holds as JSON (exit 65 with the reason when a client would refuse it).
 */
import { labelSetCount, rangeCount } from '../ip/range-table.js';
import { openSnapshot, SnapshotOpenError } from '../snapshot/reader.js';
import { RANGE_CATEGORIES } from '../snapshot/schema.js';
import { type CliIo, dataError, noInputError } from './cli-error.js';
import { parseOptions } from './parse-options.js';
import type { CommandSpec } from './usage.js';

export const SNAPSHOT_INSPECT = {
  name: 'snapshot inspect',
  summary: 'verify a snapshot file as a client does and print what it holds as JSON',
  arguments: [{ name: 'FILE', description: 'the snapshot file' }],
  options: {},
  notes: [
    'Prints the versions, the range counts of each category and the rules.',
    'A file a client would refuse exits 65 with the reason; a missing file exits 66.',
  ],
  examples: ['rampart snapshot inspect site.sqlite'],
} as const satisfies CommandSpec;

export async function snapshotInspectCommand(argv: readonly string[], io: CliIo): Promise<void> {
  const { args } = parseOptions(argv, SNAPSHOT_INSPECT);
  const path = args.FILE;
  const snapshot = await openOrExplain(path);
  try {
    const { rules, tables, labelValue: _labelValue, close: _close, ...info } = snapshot;
    const categories = Object.fromEntries(
      RANGE_CATEGORIES.map((c) => [
        c,
        {
          ipv4Ranges: tables[c].v4Starts.length,
          ipv6Ranges: tables[c].v6Sets.length,
          labelSets: labelSetCount(tables[c]),
          total: rangeCount(tables[c]),
        },
      ]),
    );
    const ruleSummary = rules.map((r) => ({
      id: r.id,
      type: r.type,
      action: r.type === 'rate_limit' ? 'rate_limit' : r.action,
      mode: r.mode,
      ...(r.expiresAt ? { expiresAt: r.expiresAt } : {}),
    }));
    io.stdout.write(
      `${JSON.stringify({ ...info, integrity: 'ok', categories, rules: ruleSummary }, null, 2)}\n`,
    );
  } finally {
    snapshot.close();
  }
}

/** Opens a snapshot for a command, mapping refusals to CLI exit codes. */
export async function openOrExplain(path: string) {
  try {
    return await openSnapshot(path);
  } catch (error) {
    if (error instanceof SnapshotOpenError) {
      throw error.reason === 'missing' ? noInputError(error.message) : dataError(error.message);
    }
    throw error;
  }
}
