/**
 * The snapshot file format: one SQLite database per snapshot version.
 *
 * Designed for the client's load, not for ad-hoc SQL: ranges are stored already flattened
 * (disjoint, sorted) and packed into little-endian uint32 blobs of at most
 * {@link RANGE_BLOCK_SIZE} ranges, so loading a million ranges is a few dozen memcpy-sized reads
 * that can be spread over event-loop turns. Rules are stored as their validated JSON, so a reader
 * never re-validates. The package README documents every table.
 *
 * Bump {@link SCHEMA_VERSION} on any change a reader of the previous version would misread;
 * readers refuse versions they do not know. A reader only ever selects from the tables it knows,
 * so a new table that the old meaning of every other table survives (such as `proxy_config`)
 * keeps the version: older readers ignore it, and newer readers treat its absence as "none".
 */

export const SCHEMA_VERSION = 1;

/** Ranges per row of `range_blocks`: big enough to load fast, small enough to load in < 1 ms. */
export const RANGE_BLOCK_SIZE = 32_768;

/** Categories of range tables, in the order the evaluator consults them. */
export const RANGE_CATEGORIES = ['ip', 'country', 'asn', 'reputation'] as const;
export type RangeCategory = (typeof RANGE_CATEGORIES)[number];

/**
 * What a label means in each category:
 * - ip: the position of an `ip` rule in `rules`
 * - country: the ISO code packed as (charCode(c0) << 8) | charCode(c1)
 * - asn: the AS number
 * - reputation: the index of the list in `labels` (category 'reputation', value = list name)
 */
export function packCountry(code: string): number {
  return (code.charCodeAt(0) << 8) | code.charCodeAt(1);
}

export function unpackCountry(label: number): string {
  return String.fromCharCode(label >>> 8, label & 0xff);
}

export const DDL = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE rules (
  position   INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  type       TEXT NOT NULL,
  action     TEXT NOT NULL,
  mode       TEXT NOT NULL,
  expires_at TEXT,
  body       TEXT NOT NULL
);

CREATE TABLE range_blocks (
  category TEXT NOT NULL,
  family   INTEGER NOT NULL,
  block    INTEGER NOT NULL,
  count    INTEGER NOT NULL,
  starts   BLOB NOT NULL,
  ends     BLOB NOT NULL,
  sets     BLOB NOT NULL,
  PRIMARY KEY (category, family, block)
) WITHOUT ROWID;

CREATE TABLE label_sets (
  category TEXT PRIMARY KEY,
  count    INTEGER NOT NULL,
  offsets  BLOB NOT NULL,
  labels   BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE proxy_config (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  body TEXT NOT NULL
);

CREATE TABLE labels (
  category TEXT NOT NULL,
  label    INTEGER NOT NULL,
  value    TEXT NOT NULL,
  detail   TEXT,
  PRIMARY KEY (category, label)
) WITHOUT ROWID;
`;

/** Keys of the `meta` table. */
export const META = {
  schemaVersion: 'schema_version',
  snapshotVersion: 'snapshot_version',
  createdAt: 'created_at',
  ruleCount: 'rule_count',
  rangeCount: 'range_count',
  storedRangeCount: 'stored_range_count',
  datasets: 'datasets',
  /**
   * Optional: the site's key for hashing account identifiers in signals (HMAC-SHA256), so they
   * leave an app only as keyed hashes. Readers that do not know it ignore it.
   */
  signalKey: 'signal_key',
} as const;

/**
 * The meta key holding the SHA-256 of a category's range table (see `table-digest.ts`). Optional:
 * a file without it is loaded in full, and readers that do not know it ignore it, so it needs no
 * schema version of its own.
 */
export function tableDigestKey(category: RangeCategory): string {
  return `table_sha256:${category}`;
}
