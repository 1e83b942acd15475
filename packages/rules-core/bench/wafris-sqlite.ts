/**
 * The anchor's SQLite range tables (wafris-rb 2.3), rebuilt from public data for the benchmark.
 *
 * One table per range category, one indexed text column `member` holding the two rows of every
 * range (see `wafris-layout.ts`), and a lookup of two indexed `LIMIT 1` queries per table through
 * prepared statements: the nearest member at-or-above the address and the nearest at-or-below.
 * SQLite runs with its defaults on the read side, as the anchor's client opens the file.
 */

import type { IpRange } from '@rampart/rules-core/ip/range';
import Database from 'better-sqlite3';
import { ipToLexicalDecimal } from './lexical-decimal.ts';
import { matchNeighbours, tableMembers } from './wafris-layout.ts';

export interface WafrisTable {
  /** SQL identifier: lower-case letters and underscores. */
  readonly name: string;
  /** Range `i` gets id `i`. */
  readonly ranges: readonly IpRange[];
}

const TABLE_NAME = /^[a-z_]{1,64}$/;

/** Table names are interpolated into SQL, so only plain identifiers are accepted. */
function checkedName(name: string): string {
  if (!TABLE_NAME.test(name)) throw new Error(`invalid Wafris table name ${JSON.stringify(name)}`);
  return name;
}

/**
 * Writes a new database at `path` (which must not exist) holding `tables`.
 *
 * All rows of a table go in inside one transaction, already sorted, and the index is created
 * afterwards: the build takes seconds instead of minutes and the index comes out compact, which
 * if anything favours the anchor's lookups.
 */
export function buildWafrisSqlite(path: string, tables: readonly WafrisTable[]): void {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    for (const table of tables)
      insertTable(db, checkedName(table.name), tableMembers(table.ranges));
  } finally {
    db.close();
  }
}

function insertTable(db: Database.Database, name: string, members: readonly string[]): void {
  db.exec(`CREATE TABLE ${name} (member TEXT NOT NULL)`);
  const insert = db.prepare(`INSERT INTO ${name} (member) VALUES (?)`);
  db.transaction(() => {
    for (const member of members) insert.run(member);
  })();
  db.exec(`CREATE INDEX ${name}_member ON ${name} (member)`);
}

/** Prepared lookups over an open Wafris database. */
export interface WafrisSqliteLookup {
  readonly tables: readonly string[];
  /**
   * Looks `ip` (text, either family) up in every table and writes the matched range id, or -1,
   * to `out[at + t]` for table `t`. The text-to-key conversion is part of the lookup, as it is
   * part of the anchor's request path.
   */
  lookup(ip: string, out: Int32Array, at: number): void;
  close(): void;
}

interface TableStatements {
  readonly above: Database.Statement<[string], string>;
  readonly below: Database.Statement<[string], string>;
}

/** Opens `path` read-only and prepares the two queries of each of `tables`. */
export function openWafrisSqlite(path: string, tables: readonly string[]): WafrisSqliteLookup {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const statements = tables.map((name) => prepareTable(db, checkedName(name)));
  return {
    tables,
    lookup(ip, out, at) {
      const key = ipToLexicalDecimal(ip);
      for (let t = 0; t < statements.length; t++) {
        const s = statements[t] as TableStatements;
        out[at + t] = matchNeighbours(s.above.get(key), s.below.get(key));
      }
    },
    close() {
      db.close();
    },
  };
}

function prepareTable(db: Database.Database, name: string): TableStatements {
  const above = db.prepare<[string], string>(
    `SELECT member FROM ${name} WHERE member >= ? ORDER BY member ASC LIMIT 1`,
  );
  const below = db.prepare<[string], string>(
    `SELECT member FROM ${name} WHERE member <= ? ORDER BY member DESC LIMIT 1`,
  );
  return { above: above.pluck(), below: below.pluck() };
}
