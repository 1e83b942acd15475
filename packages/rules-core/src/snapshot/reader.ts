/**
 * Opens a snapshot file for evaluation.
 *
 * The contract: `openSnapshot` resolves only with a snapshot that is a SQLite database, passes
 * `PRAGMA quick_check`, has exactly the schema version this code knows and whose rules validate;
 * anything else rejects with a {@link SnapshotOpenError} whose `reason` says which check failed.
 * A client keeps its last good snapshot in that case.
 *
 * Loading must not stall the event loop of the server doing it: ranges are copied block by block
 * with a turn of the event loop between blocks, and the integrity check (which reads the whole
 * file) runs on a worker thread at the same time. A range table whose digest equals that of the
 * same table in the snapshot in use (`reuseTablesOf`) is not read at all: the arrays are shared.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import Database from 'better-sqlite3';
import { BucketIndexBuilder, type RangeTable } from '../ip/range-table.js';
import type { Rule } from '../rules/model.js';
import { describeIssues, RuleListParser } from '../rules/validate.js';
import { type IntegrityCheck, quickCheckOnWorker } from './integrity-check.js';
import {
  META,
  RANGE_CATEGORIES,
  type RangeCategory,
  SCHEMA_VERSION,
  tableDigestKey,
} from './schema.js';
import { TurnBudget } from './turn-budget.js';

export type SnapshotOpenFailure =
  | 'missing'
  | 'not_sqlite'
  | 'corrupt'
  | 'schema_version'
  | 'invalid_content';

export class SnapshotOpenError extends Error {
  constructor(
    readonly path: string,
    readonly reason: SnapshotOpenFailure,
    detail: string,
  ) {
    super(`cannot open snapshot ${path}: ${detail}`);
    this.name = 'SnapshotOpenError';
  }
}

export interface SnapshotInfo {
  readonly path: string;
  readonly schemaVersion: number;
  readonly version: number;
  readonly createdAt: string;
  readonly ruleCount: number;
  readonly rangeCount: number;
  readonly storedRangeCount: number;
  readonly datasets: Readonly<Record<string, string>>;
  /** SHA-256 of each range table as the writer recorded it; null in files written without. */
  readonly tableDigests: Readonly<Record<RangeCategory, string | null>>;
}

export interface Snapshot extends SnapshotInfo {
  readonly rules: readonly Rule[];
  readonly tables: Readonly<Record<RangeCategory, RangeTable>>;
  /** The stored name of a label (reputation list name, AS organisation), if any. */
  labelValue(
    category: RangeCategory,
    label: number,
  ): { value: string; detail: string | null } | undefined;
  /** Releases the file handle; the snapshot must not be used afterwards. */
  close(): void;
}

export interface OpenSnapshotOptions {
  /**
   * How to run `PRAGMA quick_check`, which reads the whole file: by default on a worker thread
   * started for this open. A long-running process that opens snapshots under load passes a
   * runner on a thread it keeps (starting a thread costs tens of milliseconds of CPU, taken
   * from the requests on a busy host). `false` skips the check: only tests of the loader do.
   */
  readonly integrityCheck?: boolean | IntegrityCheck;
  /**
   * The snapshot in use, whose range tables may be shared where the new file's are the same
   * (equal digests): a rule-only change then loads no ranges and allocates no new table memory.
   * Tables are immutable, so sharing is safe, and they outlive `close()` of either snapshot.
   */
  readonly reuseTablesOf?: Snapshot;
}

const SQLITE_MAGIC = 'SQLite format 3\0';

/** Opens, verifies and loads a snapshot (see the module comment for the contract). */
export async function openSnapshot(
  path: string,
  options: OpenSnapshotOptions = {},
): Promise<Snapshot> {
  if (endianness() !== 'LE')
    throw new SnapshotOpenError(path, 'corrupt', 'snapshots are read on little-endian hosts only');
  checkMagic(path);
  const check = options.integrityCheck ?? true;
  const integrity =
    check === false
      ? Promise.resolve('ok')
      : (check === true ? quickCheckOnWorker : check)(path).catch(
          (error: unknown) => `integrity check failed to run: ${(error as Error).message}`,
        );
  let db: Database.Database | undefined;
  const budget = new TurnBudget();
  try {
    await budget.yield(); // starting a worker thread takes a few milliseconds
    db = new Database(path, { readonly: true, fileMustExist: true });
    const info = readInfo(db, path);
    const rules = await readRules(db, path, budget);
    const tables = await readTables(db, budget, info, options.reuseTablesOf);
    const verdict = await integrity;
    if (verdict !== 'ok')
      throw new SnapshotOpenError(path, 'corrupt', `integrity check failed: ${verdict}`);
    return makeSnapshot(db, info, rules, tables);
  } catch (error) {
    db?.close();
    // A damaged file can fail any read; when the integrity check agrees, say so rather than
    // blaming whatever table happened to be read first.
    const verdict = await integrity;
    if (error instanceof SnapshotOpenError && (error.reason === 'corrupt' || verdict === 'ok'))
      throw error;
    throw new SnapshotOpenError(
      path,
      'corrupt',
      verdict === 'ok' ? (error as Error).message : `integrity check failed: ${verdict}`,
    );
  }
}

function checkMagic(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new SnapshotOpenError(path, 'missing', (error as Error).message);
  }
  try {
    const header = Buffer.alloc(16);
    const n = readSync(fd, header, 0, 16, 0);
    if (n < 16 || header.toString('latin1') !== SQLITE_MAGIC) {
      throw new SnapshotOpenError(path, 'not_sqlite', 'the file is not a SQLite database');
    }
  } finally {
    closeSync(fd);
  }
}

function readInfo(db: Database.Database, path: string): SnapshotInfo {
  let rows: { key: string; value: string }[];
  try {
    rows = db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
  } catch (error) {
    throw new SnapshotOpenError(
      path,
      'schema_version',
      `no readable meta table (${(error as Error).message})`,
    );
  }
  const meta = new Map(rows.map((r) => [r.key, r.value]));
  const schemaVersion = Number(meta.get(META.schemaVersion));
  if (schemaVersion !== SCHEMA_VERSION) {
    throw new SnapshotOpenError(
      path,
      'schema_version',
      `schema version ${meta.get(META.schemaVersion) ?? '(missing)'} is not the supported version ${SCHEMA_VERSION}`,
    );
  }
  const number = (key: string) => {
    const value = Number(meta.get(key));
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new SnapshotOpenError(
        path,
        'invalid_content',
        `meta ${key} is not a non-negative integer`,
      );
    }
    return value;
  };
  return {
    path,
    schemaVersion,
    version: number(META.snapshotVersion),
    createdAt: meta.get(META.createdAt) ?? '',
    ruleCount: number(META.ruleCount),
    rangeCount: number(META.rangeCount),
    storedRangeCount: number(META.storedRangeCount),
    datasets: JSON.parse(meta.get(META.datasets) ?? '{}') as Record<string, string>,
    tableDigests: Object.fromEntries(
      RANGE_CATEGORIES.map((category) => [category, meta.get(tableDigestKey(category)) ?? null]),
    ) as Record<RangeCategory, string | null>,
  };
}

/**
 * Reads and re-validates the stored rules (a snapshot is input like any other), a few rules per
 * event-loop turn: rules with hundreds of ranges take milliseconds each to check.
 */
async function readRules(db: Database.Database, path: string, budget: TurnBudget): Promise<Rule[]> {
  const rows = db.prepare('SELECT body FROM rules ORDER BY position').pluck().all() as string[];
  const parser = new RuleListParser();
  for (let index = 0; index < rows.length; index++) {
    let json: unknown;
    try {
      json = JSON.parse(rows[index] as string);
    } catch (error) {
      throw new SnapshotOpenError(
        path,
        'invalid_content',
        `rule ${index} is not JSON: ${(error as Error).message}`,
      );
    }
    parser.add(json, index);
    await budget.pause();
  }
  if (parser.issues.length > 0) {
    throw new SnapshotOpenError(
      path,
      'invalid_content',
      `stored rules do not validate: ${describeIssues(parser.issues)}`,
    );
  }
  return parser.rules;
}

interface BlockRow {
  family: number;
  count: number;
  starts: Buffer;
  ends: Buffer;
  sets: Buffer;
}

/** Copies `source` into `target` at uint32 index `at` (a memcpy; blobs need not be aligned). */
function copyInto(target: Uint32Array, at: number, source: Buffer): void {
  if (source.length % 4 !== 0 || at * 4 + source.length > target.byteLength) {
    throw new Error('a range blob does not have the length its row announces');
  }
  source.copy(Buffer.from(target.buffer, target.byteOffset + at * 4, source.length));
}

async function readTables(
  db: Database.Database,
  budget: TurnBudget,
  info: SnapshotInfo,
  previous: Snapshot | undefined,
): Promise<Record<RangeCategory, RangeTable>> {
  const totals = db
    .prepare('SELECT category, family, SUM(count) AS n FROM range_blocks GROUP BY category, family')
    .all() as { category: string; family: number; n: number }[];
  const total = (category: RangeCategory, family: number) =>
    totals.find((t) => t.category === category && t.family === family)?.n ?? 0;
  const blocks = db.prepare(
    'SELECT family, count, starts, ends, sets FROM range_blocks WHERE category = ? ORDER BY family, block',
  );
  const setsRow = db.prepare('SELECT count, offsets, labels FROM label_sets WHERE category = ?');
  const tables = {} as Record<RangeCategory, RangeTable>;
  for (const category of RANGE_CATEGORIES) {
    const digest = info.tableDigests[category];
    if (previous && digest !== null && previous.tableDigests[category] === digest) {
      tables[category] = previous.tables[category];
      continue;
    }
    await budget.yield();
    const sets = readLabelSets(
      setsRow.get(category) as { count: number; offsets: Buffer; labels: Buffer } | undefined,
    );
    const v4 = new FamilyLoader(total(category, 4), 1, sets.setOffsets.length - 1);
    const v6 = new FamilyLoader(total(category, 6), 4, sets.setOffsets.length - 1);
    // Iterating keeps one row in memory at a time; awaiting between rows keeps each step short.
    for (const row of blocks.iterate(category) as IterableIterator<BlockRow>) {
      await (row.family === 4 ? v4 : v6).add(row, budget);
      await budget.yield();
    }
    tables[category] = {
      v4Starts: v4.starts,
      v4Ends: v4.ends,
      v4Sets: v4.sets,
      v4Index: v4.finish(),
      v6Starts: v6.starts,
      v6Ends: v6.ends,
      v6Sets: v6.sets,
      v6Index: v6.finish(),
      ...sets,
    };
  }
  return tables;
}

/** Ranges checked between two looks at the turn budget. */
const CHECK_SLICE = 2048;

/** Receives the blocks of one category and family in order and checks them as they come. */
class FamilyLoader {
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly sets: Uint32Array;
  private readonly index: BucketIndexBuilder;
  private count = 0;

  constructor(
    private readonly total: number,
    private readonly words: 1 | 4,
    private readonly setCount: number,
  ) {
    this.starts = new Uint32Array(total * words);
    this.ends = new Uint32Array(total * words);
    this.sets = new Uint32Array(total);
    this.index = new BucketIndexBuilder(words);
  }

  async add(row: BlockRow, budget: TurnBudget): Promise<void> {
    const from = this.count;
    if (from + row.count > this.total)
      throw new Error('range blocks hold more ranges than counted');
    const bytes = row.count * this.words * 4;
    if (
      row.starts.length !== bytes ||
      row.ends.length !== bytes ||
      row.sets.length !== row.count * 4
    ) {
      throw new Error('a range block does not have the length its row announces');
    }
    copyInto(this.starts, from * this.words, row.starts);
    copyInto(this.ends, from * this.words, row.ends);
    copyInto(this.sets, from, row.sets);
    this.count += row.count;
    for (let at = from; at < this.count; at += CHECK_SLICE) {
      this.check(at, Math.min(at + CHECK_SLICE, this.count));
      await budget.pause();
    }
  }

  /** Validates and indexes ranges [from, to). */
  private check(from: number, to: number): void {
    // A set index out of bounds would make the evaluator read garbage: refuse such a file.
    for (let i = from; i < to; i++) {
      if ((this.sets[i] as number) >= this.setCount) {
        throw new Error('a range refers to a label set that does not exist');
      }
    }
    this.index.add(this.starts, from, to);
  }

  finish(): Uint32Array {
    return this.index.finish(this.count);
  }
}

function readLabelSets(
  row: { count: number; offsets: Buffer; labels: Buffer } | undefined,
): Pick<RangeTable, 'setOffsets' | 'setLabels'> {
  if (!row) return { setOffsets: new Uint32Array([0]), setLabels: new Uint32Array(0) };
  const setOffsets = new Uint32Array(row.count + 1);
  const setLabels = new Uint32Array(row.labels.length / 4);
  copyInto(setOffsets, 0, row.offsets);
  copyInto(setLabels, 0, row.labels);
  if ((setOffsets[row.count] as number) !== setLabels.length) {
    throw new Error('label set offsets do not match the stored labels');
  }
  return { setOffsets, setLabels };
}

function makeSnapshot(
  db: Database.Database,
  info: SnapshotInfo,
  rules: readonly Rule[],
  tables: Record<RangeCategory, RangeTable>,
): Snapshot {
  const labelQuery = db.prepare(
    'SELECT value, detail FROM labels WHERE category = ? AND label = ?',
  );
  return {
    ...info,
    rules,
    tables,
    labelValue: (category, label) =>
      labelQuery.get(category, label) as { value: string; detail: string | null } | undefined,
    close: () => db.close(),
  };
}
