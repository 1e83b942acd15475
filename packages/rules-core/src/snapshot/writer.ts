/**
 * Builds a snapshot file from a validated rule set and range datasets.
 *
 * The file appears at `path` complete or not at all: it is written to a temporary sibling and
 * renamed into place, so a reader (or the hub's publisher) never sees half a snapshot.
 *
 * The layout is deterministic and puts what changes least first: the dataset tables (country,
 * ASN, reputation), then the table of the rules' own addresses, then the prexy configuration,
 * then the rules, then `meta`.
 * SQLite allocates pages in the order rows arrive, so a snapshot whose datasets did not change
 * (a rule edit, an automatic block) has the same bytes as the previous one up to its last pages,
 * and a page delta between the two (`page-delta.ts`) carries kilobytes, not the datasets.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import Database from 'better-sqlite3';
import type { AsnEntry, CountryEntry, ReputationList } from '../datasets/dataset.js';
import { flattenRanges, type LabelledRange } from '../ip/flatten.js';
import { parseIpRange } from '../ip/range.js';
import { labelSetCount, packRanges, type RangeTable, rangeCount } from '../ip/range-table.js';
import type { ProxyConfig } from '../proxy-config/proxy-config.js';
import type { RuleSet } from '../rules/model.js';
import {
  DDL,
  META,
  packCountry,
  RANGE_BLOCK_SIZE,
  type RangeCategory,
  SCHEMA_VERSION,
  tableDigestKey,
} from './schema.js';
import { tableDigest } from './table-digest.js';

export interface SnapshotInput {
  /** A rule set as returned by `parseRuleSet` (already validated). */
  readonly ruleSet: RuleSet;
  readonly country?: readonly CountryEntry[];
  readonly asn?: readonly AsnEntry[];
  readonly reputation?: readonly ReputationList[];
  /** The snapshot version; the hub makes it increase monotonically per site. */
  readonly version: number;
  readonly createdAt?: Date;
  /** Free-form provenance of the datasets (file names, package versions), stored in `meta`. */
  readonly datasets?: Readonly<Record<string, string>>;
  /** The site's key for hashing account identifiers in signals (hex, 32 to 128 digits). */
  readonly signalKey?: string;
  /**
   * The site's prexy configuration (routes and substitution rule sets), as `parseProxyConfig`
   * returned it; stored as JSON in `proxy_config`. WAF clients never read it.
   */
  readonly proxyConfig?: ProxyConfig;
}

export interface SnapshotSummary {
  readonly path: string;
  readonly schemaVersion: number;
  readonly version: number;
  readonly createdAt: string;
  readonly ruleCount: number;
  /** Ranges given as input, over all categories. */
  readonly rangeCount: number;
  /** Ranges stored after flattening, per category. */
  readonly storedRanges: Readonly<Record<RangeCategory, number>>;
  readonly bytes: number;
}

/** Thrown when the input cannot make a coherent snapshot (the file is not written). */
export class SnapshotBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotBuildError';
  }
}

interface BuiltCategory {
  readonly category: RangeCategory;
  readonly table: RangeTable;
  readonly inputCount: number;
  readonly labels: readonly { label: number; value: string; detail: string | null }[];
}

/** Writes the snapshot atomically to `path` and describes what it holds. */
export function writeSnapshot(path: string, input: SnapshotInput): SnapshotSummary {
  if (endianness() !== 'LE')
    throw new SnapshotBuildError('snapshots are written on little-endian hosts only');
  if (!Number.isSafeInteger(input.version) || input.version < 1) {
    throw new SnapshotBuildError(`version must be a positive integer, got ${input.version}`);
  }
  const lists = input.reputation ?? [];
  checkReputationReferences(input.ruleSet, lists);
  if (input.signalKey !== undefined && !/^[0-9a-f]{32,128}$/.test(input.signalKey))
    throw new SnapshotBuildError('signalKey must be 32 to 128 lower-case hex digits');
  const categories = [
    buildIpCategory(input.ruleSet),
    buildCountryCategory(input.country ?? []),
    buildAsnCategory(input.asn ?? []),
    buildReputationCategory(lists),
  ];
  const createdAt = (input.createdAt ?? new Date()).toISOString();
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFile(temporary, input, categories, createdAt);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return {
    path,
    schemaVersion: SCHEMA_VERSION,
    version: input.version,
    createdAt,
    ruleCount: input.ruleSet.rules.length,
    rangeCount: categories.reduce((n, c) => n + c.inputCount, 0),
    storedRanges: Object.fromEntries(
      categories.map((c) => [c.category, rangeCount(c.table)]),
    ) as Record<RangeCategory, number>,
    bytes: statSync(path).size,
  };
}

function checkReputationReferences(ruleSet: RuleSet, lists: readonly ReputationList[]): void {
  const names = new Set<string>();
  for (const list of lists) {
    if (names.has(list.name))
      throw new SnapshotBuildError(`reputation list "${list.name}" is given twice`);
    names.add(list.name);
  }
  ruleSet.rules.forEach((rule, index) => {
    if (rule.type !== 'reputation') return;
    for (const name of rule.lists) {
      if (!names.has(name)) {
        throw new SnapshotBuildError(
          `rules[${index}] (id "${rule.id}"): lists: reputation list "${name}" is not among the datasets (${[...names].join(', ') || 'none given'})`,
        );
      }
    }
  });
}

function built(
  category: RangeCategory,
  entries: readonly LabelledRange[],
  labels: BuiltCategory['labels'] = [],
): BuiltCategory {
  return {
    category,
    table: packRanges(flattenRanges(entries)),
    inputCount: entries.length,
    labels,
  };
}

function buildIpCategory(ruleSet: RuleSet): BuiltCategory {
  const entries: LabelledRange[] = [];
  ruleSet.rules.forEach((rule, position) => {
    if (rule.type !== 'ip') return;
    for (const text of rule.ranges) {
      for (const range of parseIpRange(text)) entries.push({ range, label: position });
    }
  });
  return built('ip', entries);
}

function buildCountryCategory(country: readonly CountryEntry[]): BuiltCategory {
  return built(
    'country',
    country.map((e) => ({ range: e.range, label: packCountry(e.country) })),
  );
}

function buildAsnCategory(asn: readonly AsnEntry[]): BuiltCategory {
  const orgs = new Map<number, string>();
  for (const e of asn) if (!orgs.has(e.asn)) orgs.set(e.asn, e.org);
  const labels = [...orgs].map(([label, org]) => ({
    label,
    value: String(label),
    detail: org || null,
  }));
  return built(
    'asn',
    asn.map((e) => ({ range: e.range, label: e.asn })),
    labels,
  );
}

function buildReputationCategory(lists: readonly ReputationList[]): BuiltCategory {
  const entries: LabelledRange[] = [];
  lists.forEach((list, label) => {
    for (const range of list.ranges) entries.push({ range, label });
  });
  return built(
    'reputation',
    entries,
    lists.map((list, label) => ({ label, value: list.name, detail: null })),
  );
}

/** A little-endian view of `count` uint32s of `array` from index `from`, without copying. */
function blob(array: Uint32Array, from: number, count: number): Buffer {
  return Buffer.from(array.buffer, array.byteOffset + from * 4, count * 4);
}

function writeFile(
  path: string,
  input: SnapshotInput,
  categories: readonly BuiltCategory[],
  createdAt: string,
): void {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(DDL);
    db.transaction(() => {
      for (const c of [...categories].sort(byStability)) writeCategory(db, c);
      if (input.proxyConfig !== undefined) {
        db.prepare('INSERT INTO proxy_config (id, body) VALUES (1, ?)').run(
          JSON.stringify(input.proxyConfig),
        );
      }
      writeRules(db, input.ruleSet);
      writeMeta(db, input, categories, createdAt);
    })();
  } finally {
    db.close();
  }
}

/** The datasets first, the table of the rules' own addresses (`ip`) after them. */
const WRITE_ORDER: readonly RangeCategory[] = ['country', 'asn', 'reputation', 'ip'];

function byStability(a: BuiltCategory, b: BuiltCategory): number {
  return WRITE_ORDER.indexOf(a.category) - WRITE_ORDER.indexOf(b.category);
}

function writeMeta(
  db: Database.Database,
  input: SnapshotInput,
  categories: readonly BuiltCategory[],
  createdAt: string,
): void {
  const insert = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  insert.run(META.schemaVersion, String(SCHEMA_VERSION));
  insert.run(META.snapshotVersion, String(input.version));
  insert.run(META.createdAt, createdAt);
  insert.run(META.ruleCount, String(input.ruleSet.rules.length));
  insert.run(META.rangeCount, String(categories.reduce((n, c) => n + c.inputCount, 0)));
  insert.run(
    META.storedRangeCount,
    String(categories.reduce((n, c) => n + rangeCount(c.table), 0)),
  );
  insert.run(META.datasets, JSON.stringify(input.datasets ?? {}));
  if (input.signalKey !== undefined) insert.run(META.signalKey, input.signalKey);
  for (const c of categories) insert.run(tableDigestKey(c.category), tableDigest(c.table));
}

function writeRules(db: Database.Database, ruleSet: RuleSet): void {
  const insert = db.prepare(
    'INSERT INTO rules (position, id, type, action, mode, expires_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  ruleSet.rules.forEach((rule, position) => {
    const action = rule.type === 'rate_limit' ? 'rate_limit' : rule.action;
    insert.run(
      position,
      rule.id,
      rule.type,
      action,
      rule.mode,
      rule.expiresAt ?? null,
      JSON.stringify(rule),
    );
  });
}

function writeCategory(db: Database.Database, c: BuiltCategory): void {
  const insertBlock = db.prepare(
    'INSERT INTO range_blocks (category, family, block, count, starts, ends, sets) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const t = c.table;
  const families = [
    { family: 4, starts: t.v4Starts, ends: t.v4Ends, sets: t.v4Sets, words: 1 },
    { family: 6, starts: t.v6Starts, ends: t.v6Ends, sets: t.v6Sets, words: 4 },
  ];
  for (const { family, starts, ends, sets, words } of families) {
    for (let block = 0, from = 0; from < sets.length; block++, from += RANGE_BLOCK_SIZE) {
      const n = Math.min(RANGE_BLOCK_SIZE, sets.length - from);
      const bounds = (array: Uint32Array) => blob(array, from * words, n * words);
      insertBlock.run(
        c.category,
        family,
        block,
        n,
        bounds(starts),
        bounds(ends),
        blob(sets, from, n),
      );
    }
  }
  db.prepare('INSERT INTO label_sets (category, count, offsets, labels) VALUES (?, ?, ?, ?)').run(
    c.category,
    labelSetCount(t),
    blob(t.setOffsets, 0, t.setOffsets.length),
    blob(t.setLabels, 0, t.setLabels.length),
  );
  const insertLabel = db.prepare(
    'INSERT INTO labels (category, label, value, detail) VALUES (?, ?, ?, ?)',
  );
  for (const l of c.labels) insertLabel.run(c.category, l.label, l.value, l.detail);
}
