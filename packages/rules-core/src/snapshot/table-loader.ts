/**
 * Reading a snapshot's range tables into the typed arrays the evaluator searches, with every
 * check a damaged or hostile file needs (blob lengths, range counts, label-set indices).
 *
 * One implementation, two ways to run it:
 * - on the thread that serves requests, in steps: {@link tablesSteps} is a generator that stops
 *   after each bounded piece of work (`'yield'` before a large SQL read, `'pause'` after
 *   checking a slice of ranges), and `openSnapshot` turns the event loop there;
 * - on a thread the caller keeps, at once: {@link loadTablesNow} runs the same steps without
 *   stopping, on its own connection, and returns arrays that can be transferred to the thread
 *   that asked ({@link transferListOf}) without a copy.
 */
import Database from 'better-sqlite3';
import { BucketIndexBuilder, type RangeTable } from '../ip/range-table.js';
import type { RangeCategory } from './schema.js';

/** Where a table load may stop: always (`yield`), or if its time slice is used up (`pause`). */
export type LoadStep = 'yield' | 'pause';

/**
 * Loads the named categories' tables of the snapshot file at `path` somewhere other than the
 * calling thread (see `openSnapshot`'s `loadTables`). Rejects if a table is damaged; resolves
 * undefined to have them loaded on the calling thread after all (the other thread is gone, or
 * failed in a way it cannot attribute to the file: the stepwise load then decides).
 */
export type TableLoader = (
  path: string,
  categories: readonly RangeCategory[],
) => Promise<LoadedTables | undefined>;

interface BlockRow {
  family: number;
  count: number;
  starts: Buffer;
  ends: Buffer;
  sets: Buffer;
}

/** Tables by category, as loaded (only those asked for). */
export type LoadedTables = Partial<Record<RangeCategory, RangeTable>>;

/**
 * The steps that read the tables of `categories` from `db`, in that order; the generator's
 * return value is the tables. Throws (from `next()`) if a stored table is inconsistent.
 */
export function* tablesSteps(
  db: Database.Database,
  categories: readonly RangeCategory[],
): Generator<LoadStep, LoadedTables> {
  const total = rangeTotals(db);
  const tables: LoadedTables = {};
  for (const category of categories) tables[category] = yield* tableSteps(db, category, total);
  return tables;
}

/** The per-category row counts, read once per file (one small aggregate query). */
function rangeTotals(db: Database.Database): (category: string, family: number) => number {
  const totals = db
    .prepare('SELECT category, family, SUM(count) AS n FROM range_blocks GROUP BY category, family')
    .all() as { category: string; family: number; n: number }[];
  return (category, family) =>
    totals.find((t) => t.category === category && t.family === family)?.n ?? 0;
}

/** The steps that read one category's table from `db`; the generator returns the table. */
function* tableSteps(
  db: Database.Database,
  category: RangeCategory,
  total: (category: string, family: number) => number,
): Generator<LoadStep, RangeTable> {
  yield 'yield';
  const sets = readLabelSets(
    db.prepare('SELECT count, offsets, labels FROM label_sets WHERE category = ?').get(category) as
      | { count: number; offsets: Buffer; labels: Buffer }
      | undefined,
  );
  const v4 = new FamilyLoader(total(category, 4), 1, sets.setOffsets.length - 1);
  const v6 = new FamilyLoader(total(category, 6), 4, sets.setOffsets.length - 1);
  const blocks = db.prepare(
    'SELECT family, count, starts, ends, sets FROM range_blocks WHERE category = ? ORDER BY family, block',
  );
  // Iterating keeps one row in memory at a time; stopping between rows keeps each step short.
  for (const row of blocks.iterate(category) as IterableIterator<BlockRow>) {
    yield* (row.family === 4 ? v4 : v6).add(row);
    yield 'yield';
  }
  return {
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

/**
 * Loads `categories` of the snapshot at `path` on the calling thread without stopping, on a
 * read-only connection of its own. For a worker thread (it blocks for the whole read).
 */
export function loadTablesNow(path: string, categories: readonly RangeCategory[]): LoadedTables {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const steps = tablesSteps(db, categories);
    let step = steps.next();
    while (!step.done) step = steps.next();
    return step.value;
  } finally {
    db.close();
  }
}

/** The buffers behind `tables`, each once: the transfer list for `postMessage`. */
export function transferListOf(tables: LoadedTables): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const table of Object.values(tables)) {
    for (const array of Object.values(table) as Uint32Array[]) {
      if (array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
    }
  }
  return [...buffers];
}

/** Copies `source` into `target` at uint32 index `at` (a memcpy; blobs need not be aligned). */
function copyInto(target: Uint32Array, at: number, source: Buffer): void {
  if (source.length % 4 !== 0 || at * 4 + source.length > target.byteLength) {
    throw new Error('a range blob does not have the length its row announces');
  }
  source.copy(Buffer.from(target.buffer, target.byteOffset + at * 4, source.length));
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

  *add(row: BlockRow): Generator<LoadStep, void> {
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
      yield 'pause';
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
    if (this.count !== this.total) throw new Error('range blocks hold fewer ranges than counted');
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
