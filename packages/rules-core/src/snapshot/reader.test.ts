import {
  closeSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { labelsOfSet, lookupV4 } from '../ip/range-table.js';
import { temporaryDirectory, writeFixture } from '../test-support/snapshot-fixture.js';
import { quickCheck, quickCheckOnWorker } from './integrity-check.js';
import { openSnapshot, SnapshotOpenError } from './reader.js';
import { RANGE_BLOCK_SIZE, SCHEMA_VERSION } from './schema.js';
import { loadTablesNow, type TableLoader, transferListOf } from './table-loader.js';

const tmp = temporaryDirectory();
afterAll(() => tmp.remove());

const RULES = [
  { id: 'office', type: 'ip', action: 'allow', ranges: ['203.0.113.0/24', '2001:db8::/48'] },
  { id: 'geo', type: 'country', action: 'block', countries: ['XA'] },
];

async function refusal(path: string): Promise<SnapshotOpenError> {
  const error = await openSnapshot(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SnapshotOpenError);
  return error as SnapshotOpenError;
}

/** Many small ranges, so the file spans many pages and range blocks. */
function bigCountryData(count: number): [string, string][] {
  return Array.from({ length: count }, (_, i) => [
    `11.${(i >> 8) & 255}.${i & 255}.0/24`,
    i % 2 ? 'XA' : 'XB',
  ]);
}

describe('openSnapshot', () => {
  it('loads what the writer stored', async () => {
    const path = writeFixture(tmp.dir, {
      rules: RULES,
      country: [['198.51.100.0/24', 'XA']],
      version: 42,
    });
    const snapshot = await openSnapshot(path);
    expect(snapshot).toMatchObject({
      schemaVersion: SCHEMA_VERSION,
      version: 42,
      ruleCount: 2,
      rangeCount: 3,
    });
    expect(snapshot.rules.map((r) => r.id)).toEqual(['office', 'geo']);
    expect(snapshot.tables.ip.v4Starts.length).toBe(1);
    expect(snapshot.tables.ip.v6Sets.length).toBe(1);
    const set = lookupV4(
      snapshot.tables.country,
      ((198 << 24) >>> 0) + (51 << 16) + (100 << 8) + 9,
    );
    expect([...labelsOfSet(snapshot.tables.country, set)]).toEqual([(88 << 8) | 65]); // "XA"
    snapshot.close();
  });

  it('loads tables that span several range blocks', async () => {
    const count = RANGE_BLOCK_SIZE + 1234;
    const path = writeFixture(
      tmp.dir,
      { rules: RULES, country: bigCountryData(count) },
      'big.sqlite',
    );
    const snapshot = await openSnapshot(path);
    expect(snapshot.tables.country.v4Starts.length).toBe(count);
    const last = lookupV4(snapshot.tables.country, ((11 << 24) >>> 0) + (count - 1) * 256 + 17);
    expect(last).toBeGreaterThanOrEqual(0);
    snapshot.close();
  });

  it('refuses a missing file', async () => {
    expect((await refusal(join(tmp.dir, 'nope.sqlite'))).reason).toBe('missing');
  });

  it('refuses a file that is not SQLite', async () => {
    const path = join(tmp.dir, 'text.sqlite');
    writeFileSync(path, 'this is a text file, not a database\n'.repeat(10));
    const error = await refusal(path);
    expect(error.reason).toBe('not_sqlite');
    expect(error.message).toContain('not a SQLite database');
  });

  it('refuses an empty file', async () => {
    const path = join(tmp.dir, 'empty.sqlite');
    writeFileSync(path, '');
    expect((await refusal(path)).reason).toBe('not_sqlite');
  });

  it('refuses a truncated file', async () => {
    const path = writeFixture(
      tmp.dir,
      { rules: RULES, country: bigCountryData(5000) },
      'truncated.sqlite',
    );
    truncateSync(path, Math.floor(statSync(path).size / 2));
    expect((await refusal(path)).reason).toBe('corrupt');
  });

  it('refuses a file whose pages were damaged', async () => {
    const path = writeFixture(
      tmp.dir,
      { rules: RULES, country: bigCountryData(5000) },
      'damaged.sqlite',
    );
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    // Overwrite the middle of the file: b-tree pages there no longer parse.
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, Math.floor(size / 2) & ~4095);
    closeSync(fd);
    expect((await refusal(path)).reason).toBe('corrupt');
  });

  it('runs the integrity check with the runner it is given, and trusts its verdict', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES }, 'runner.sqlite');
    const checked: string[] = [];
    const snapshot = await openSnapshot(path, {
      integrityCheck: async (file) => {
        checked.push(file);
        return quickCheck(file);
      },
    });
    expect(checked).toEqual([path]);
    snapshot.close();
    const said = await openSnapshot(path, {
      integrityCheck: async () =>
        '*** in database main ***\nPage 7: btreeInitPage() returns error code 11',
    }).catch((e: unknown) => e as SnapshotOpenError);
    expect(said).toMatchObject({ reason: 'corrupt', message: expect.stringMatching(/Page 7/) });
    const failed = await openSnapshot(path, {
      integrityCheck: () => Promise.reject(new Error('the thread is gone')),
    }).catch((e: unknown) => e as SnapshotOpenError);
    expect(failed).toMatchObject({
      reason: 'corrupt',
      message: expect.stringMatching(/integrity check failed to run: the thread is gone/),
    });
  });

  it('finds damaged pages with the synchronous check as with the worker', async () => {
    const path = writeFixture(
      tmp.dir,
      { rules: RULES, country: bigCountryData(5000) },
      'damaged-sync.sqlite',
    );
    expect(quickCheck(path)).toBe('ok');
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, Math.floor(size / 2) & ~4095);
    closeSync(fd);
    const verdict = quickCheck(path);
    expect(verdict).not.toBe('ok');
    expect(await quickCheckOnWorker(path)).toBe(verdict);
  });

  it('refuses another schema version, naming both versions', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES }, 'future.sqlite');
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = '999' WHERE key = 'schema_version'").run();
    db.close();
    const error = await refusal(path);
    expect(error.reason).toBe('schema_version');
    expect(error.message).toContain(
      `schema version 999 is not the supported version ${SCHEMA_VERSION}`,
    );
  });

  it('refuses a SQLite database that is not a snapshot', async () => {
    const path = join(tmp.dir, 'other.sqlite');
    const db = new Database(path);
    db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
    db.close();
    expect((await refusal(path)).reason).toBe('schema_version');
  });

  it('refuses stored rules that do not validate', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES }, 'badrule.sqlite');
    const db = new Database(path);
    db.prepare(
      `UPDATE rules SET body = '{"id":"geo","type":"country","action":"block","countries":["nowhere"]}' WHERE id = 'geo'`,
    ).run();
    db.close();
    const error = await refusal(path);
    expect(error.reason).toBe('invalid_content');
    expect(error.message).toContain('countries[0]');
  });

  it('reads the prexy configuration, and none from a file without one', async () => {
    const proxyConfig = {
      routes: [{ host: 'shop.example', upstream: 'http://127.0.0.1:3000' }],
      ruleSets: [{ pathPrefix: '/', rules: [{ pattern: 'Shop', replacement: 'Store' }] }],
    };
    const withConfig = await openSnapshot(
      writeFixture(tmp.dir, { rules: RULES, proxyConfig }, 'proxy.sqlite'),
    );
    expect(withConfig.proxyConfig).toMatchObject(proxyConfig);
    withConfig.close();
    const without = await openSnapshot(writeFixture(tmp.dir, { rules: RULES }, 'waf-only.sqlite'));
    expect(without.proxyConfig).toBeNull();
    without.close();
  });

  // The schema version rule (schema.ts): a table a reader does not know is one it never reads.
  // Version-1 files written before `proxy_config` existed lack it, and a reader of today opens
  // files with tables added after it (as yesterday's readers open files with `proxy_config`).
  it('opens files without the proxy_config table and files with tables it does not know', async () => {
    const old = writeFixture(tmp.dir, { rules: RULES }, 'before-proxy-config.sqlite');
    const olderDb = new Database(old);
    olderDb.exec('DROP TABLE proxy_config; VACUUM');
    olderDb.close();
    const older = await openSnapshot(old);
    expect(older.proxyConfig).toBeNull();
    expect(older.rules.map((r) => r.id)).toEqual(['office', 'geo']);
    older.close();

    const future = writeFixture(tmp.dir, { rules: RULES }, 'future.sqlite');
    const futureDb = new Database(future);
    futureDb.exec(
      "CREATE TABLE added_later (k TEXT PRIMARY KEY, v TEXT); INSERT INTO added_later VALUES ('a', 'b')",
    );
    futureDb.close();
    const newer = await openSnapshot(future);
    expect(newer.schemaVersion).toBe(SCHEMA_VERSION);
    expect(newer.rules.map((r) => r.id)).toEqual(['office', 'geo']);
    newer.close();
  });

  it('refuses a stored prexy configuration that is not JSON', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES }, 'bad-proxy.sqlite');
    const db = new Database(path);
    db.prepare(`INSERT INTO proxy_config (id, body) VALUES (1, '{not json')`).run();
    db.close();
    const error = await refusal(path);
    expect(error.reason).toBe('invalid_content');
    expect(error.message).toContain('proxy_config');
  });

  it('leaves the file untouched (opens read-only)', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES }, 'readonly.sqlite');
    const before = readFileSync(path);
    const snapshot = await openSnapshot(path);
    snapshot.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe('openSnapshot with the snapshot in use (reuseTablesOf)', () => {
  const data = {
    country: bigCountryData(2000),
    asn: [['198.51.100.0/24', 64500, 'Example Net'] as const],
    reputation: { bad: ['192.0.2.0/28'] },
  };

  it('shares the range tables a rule change left as they were, and loads the rest', async () => {
    const inUse = await openSnapshot(writeFixture(tmp.dir, { rules: RULES, ...data }, 'a.sqlite'));
    const moreRules = [
      { id: 'first', type: 'ip', action: 'block', ranges: ['100.64.0.0/10'] },
      ...RULES,
    ];
    const next = await openSnapshot(
      writeFixture(tmp.dir, { rules: moreRules, ...data, version: 8 }, 'b.sqlite'),
      { reuseTablesOf: inUse },
    );
    expect(next.tables.country).toBe(inUse.tables.country);
    expect(next.tables.asn).toBe(inUse.tables.asn);
    expect(next.tables.reputation).toBe(inUse.tables.reputation);
    expect(next.tables.ip).not.toBe(inUse.tables.ip); // the ip rules moved
    inUse.close(); // the shared tables outlive the snapshot they were read with
    expect(lookupV4(next.tables.country, 0x0b000105)).not.toBe(-1); // 11.0.1.5
    expect(lookupV4(next.tables.ip, 0x64400001)).not.toBe(-1); // 100.64.0.1
    next.close();
  });

  it('loads a table whose data changed', async () => {
    const inUse = await openSnapshot(writeFixture(tmp.dir, { rules: RULES, ...data }, 'c.sqlite'));
    const changed = { ...data, country: bigCountryData(1999) };
    const next = await openSnapshot(
      writeFixture(tmp.dir, { rules: RULES, ...changed, version: 8 }, 'd.sqlite'),
      { reuseTablesOf: inUse },
    );
    expect(next.tables.country).not.toBe(inUse.tables.country);
    expect(next.tables.asn).toBe(inUse.tables.asn);
    expect(lookupV4(next.tables.country, 0x0b07cf05)).toBe(-1); // 11.7.207.5: the 2000th range, gone
    expect(lookupV4(inUse.tables.country, 0x0b07cf05)).not.toBe(-1);
    inUse.close();
    next.close();
  });

  it('loads every table of a file written without digests', async () => {
    const inUse = await openSnapshot(writeFixture(tmp.dir, { rules: RULES, ...data }, 'e.sqlite'));
    const path = writeFixture(tmp.dir, { rules: RULES, ...data, version: 8 }, 'f.sqlite');
    const db = new Database(path);
    db.prepare("DELETE FROM meta WHERE key LIKE 'table_sha256:%'").run();
    db.close();
    const next = await openSnapshot(path, { reuseTablesOf: inUse });
    expect(next.tableDigests.country).toBeNull();
    expect(next.tables.country).not.toBe(inUse.tables.country);
    expect(next.tables.country.v4Starts).toEqual(inUse.tables.country.v4Starts);
    inUse.close();
    next.close();
  });
});

describe('openSnapshot with a table loader on another thread (loadTables)', () => {
  const data = {
    country: bigCountryData(3000),
    asn: [['198.51.100.0/24', 64500, 'Example Net'] as const],
    reputation: { bad: ['192.0.2.0/28'] },
  };

  /** loadTablesNow behind a structured clone that transfers the buffers, as a worker's reply. */
  const transferred: TableLoader = async (file, categories) => {
    const tables = loadTablesNow(file, categories);
    const buffers = transferListOf(tables);
    const copy = structuredClone(tables, { transfer: buffers });
    expect(buffers.every((b) => b.byteLength === 0)).toBe(true); // moved, not copied
    return copy;
  };

  it('gives the tables the stepwise load gives', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES, ...data }, 'loader-a.sqlite');
    const here = await openSnapshot(path);
    const there = await openSnapshot(path, { loadTables: transferred });
    expect(there.tables).toEqual(here.tables);
    expect(labelsOfSet(there.tables.country, lookupV4(there.tables.country, 0x0b000105))).toEqual(
      labelsOfSet(here.tables.country, lookupV4(here.tables.country, 0x0b000105)),
    );
    // A loader that cannot do it leaves the load to the calling thread.
    const fallback = await openSnapshot(path, { loadTables: async () => undefined });
    expect(fallback.tables).toEqual(here.tables);
    here.close();
    there.close();
    fallback.close();
  });

  it('asks only for the tables not shared with the snapshot in use', async () => {
    const inUse = await openSnapshot(
      writeFixture(tmp.dir, { rules: RULES, ...data }, 'loader-b.sqlite'),
    );
    const changed = { ...data, country: bigCountryData(2999) };
    const asked: (readonly string[])[] = [];
    const next = await openSnapshot(
      writeFixture(tmp.dir, { rules: RULES, ...changed, version: 8 }, 'loader-c.sqlite'),
      {
        reuseTablesOf: inUse,
        loadTables: (file, categories) => {
          asked.push(categories);
          return transferred(file, categories);
        },
      },
    );
    expect(asked).toEqual([['country']]);
    expect(next.tables.asn).toBe(inUse.tables.asn);
    expect(lookupV4(next.tables.country, 0x0b0bb705)).toBe(-1); // 11.11.183.5: the 3000th range, gone
    inUse.close();
    next.close();
  });

  it('refuses the file when the loader fails, as a damaged file', async () => {
    const path = writeFixture(tmp.dir, { rules: RULES, ...data }, 'loader-d.sqlite');
    const error = await openSnapshot(path, {
      loadTables: () =>
        Promise.reject(new Error('a range refers to a label set that does not exist')),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotOpenError);
    expect(error).toMatchObject({ reason: 'corrupt', message: expect.stringMatching(/label set/) });
  });

  it('refuses, loading at once, a range whose label set does not exist', () => {
    const path = writeFixture(tmp.dir, { rules: RULES, ...data }, 'loader-e.sqlite');
    const db = new Database(path);
    const row = db
      .prepare(
        "SELECT family, block, sets FROM range_blocks WHERE category = 'country' ORDER BY family, block LIMIT 1",
      )
      .get() as { family: number; block: number; sets: Buffer };
    const sets = Buffer.from(row.sets);
    sets.writeUInt32LE(0xffffff, 0);
    db.prepare(
      "UPDATE range_blocks SET sets = ? WHERE category = 'country' AND family = ? AND block = ?",
    ).run(sets, row.family, row.block);
    db.close();
    expect(() => loadTablesNow(path, ['country'])).toThrow(/label set that does not exist/);
    expect(Object.keys(loadTablesNow(path, ['asn', 'ip']))).toEqual(['asn', 'ip']);
  });
});
