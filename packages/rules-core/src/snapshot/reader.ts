/**
 * Opens a snapshot file for evaluation.
 *
 * The contract: `openSnapshot` resolves only with a snapshot that is a SQLite database, passes
 * `PRAGMA quick_check`, has exactly the schema version this code knows and whose rules validate;
 * anything else rejects with a {@link SnapshotOpenError} whose `reason` says which check failed.
 * A client keeps its last good snapshot in that case.
 *
 * Loading must not stall the event loop of the server doing it: ranges are copied block by block
 * with a turn of the event loop between blocks (`table-loader.ts`), or on another thread when the
 * caller passes a `loadTables`, and the integrity check (which reads the whole file) runs on a
 * worker thread at the same time. A range table whose digest equals that of the same table in
 * the snapshot in use (`reuseTablesOf`) is not read at all: the arrays are shared.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import Database from 'better-sqlite3';
import type { RangeTable } from '../ip/range-table.js';
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
import { type LoadedTables, type TableLoader, tablesSteps } from './table-loader.js';
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
  /** The site's key for hashing account identifiers in signals; null when the file has none. */
  readonly signalKey: string | null;
}

export interface Snapshot extends SnapshotInfo {
  /**
   * The site's prexy configuration as stored (a JSON document the hub validated with
   * `parseProxyConfig`); null when the file has none, also for files written before the
   * `proxy_config` table existed. Its user (prexy) validates it again as it compiles the rules,
   * so a WAF client pays only for reading the text.
   */
  readonly proxyConfig: unknown;
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
  /**
   * Where the range tables not shared with `reuseTablesOf` are read (the bulk of a load: tens
   * of megabytes for full datasets). By default here, in steps of at most ~3 ms with the event
   * loop turned between them; a server that swaps snapshots under load passes a loader on a
   * thread it keeps (`loadTablesNow` there, the arrays transferred back), so that its own
   * thread only receives the finished arrays.
   */
  readonly loadTables?: TableLoader;
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
    const proxyConfig = readProxyConfig(db, path);
    const tables = await readTables(
      db,
      path,
      budget,
      info,
      options.reuseTablesOf,
      options.loadTables,
    );
    const verdict = await integrity;
    if (verdict !== 'ok')
      throw new SnapshotOpenError(path, 'corrupt', `integrity check failed: ${verdict}`);
    return makeSnapshot(db, info, rules, proxyConfig, tables);
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
    signalKey: meta.get(META.signalKey) ?? null,
    tableDigests: Object.fromEntries(
      RANGE_CATEGORIES.map((category) => [category, meta.get(tableDigestKey(category)) ?? null]),
    ) as Record<RangeCategory, string | null>,
  };
}

/** The stored prexy configuration, if the file has the table and a row in it. */
function readProxyConfig(db: Database.Database, path: string): unknown {
  const table = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'proxy_config'")
    .get();
  if (table === undefined) return null;
  const body = db.prepare('SELECT body FROM proxy_config WHERE id = 1').pluck().get() as
    | string
    | undefined;
  if (body === undefined) return null;
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    throw new SnapshotOpenError(
      path,
      'invalid_content',
      `proxy_config is not JSON: ${(error as Error).message}`,
    );
  }
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

/**
 * The range tables: shared with the snapshot in use where the digests are equal, else loaded by
 * `loader` (another thread) or here, stopping at each step to turn the event loop.
 */
async function readTables(
  db: Database.Database,
  path: string,
  budget: TurnBudget,
  info: SnapshotInfo,
  previous: Snapshot | undefined,
  loader: TableLoader | undefined,
): Promise<Record<RangeCategory, RangeTable>> {
  const tables: LoadedTables = {};
  const toLoad: RangeCategory[] = [];
  for (const category of RANGE_CATEGORIES) {
    const digest = info.tableDigests[category];
    if (previous && digest !== null && previous.tableDigests[category] === digest) {
      tables[category] = previous.tables[category];
    } else {
      toLoad.push(category);
    }
  }
  const loaded = toLoad.length > 0 && loader ? await loader(path, toLoad) : undefined;
  if (loaded !== undefined) {
    Object.assign(tables, loaded);
  } else if (toLoad.length > 0) {
    const steps = tablesSteps(db, toLoad);
    let step = steps.next();
    while (!step.done) {
      await (step.value === 'yield' ? budget.yield() : budget.pause());
      step = steps.next();
    }
    Object.assign(tables, step.value);
  }
  for (const category of RANGE_CATEGORIES) {
    if (tables[category] === undefined) throw new Error(`the ${category} table was not loaded`);
  }
  return tables as Record<RangeCategory, RangeTable>;
}

function makeSnapshot(
  db: Database.Database,
  info: SnapshotInfo,
  rules: readonly Rule[],
  proxyConfig: unknown,
  tables: Record<RangeCategory, RangeTable>,
): Snapshot {
  const labelQuery = db.prepare(
    'SELECT value, detail FROM labels WHERE category = ? AND label = ?',
  );
  return {
    ...info,
    rules,
    proxyConfig,
    tables,
    labelValue: (category, label) =>
      labelQuery.get(category, label) as { value: string; detail: string | null } | undefined,
    close: () => db.close(),
  };
}
