import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { parseIpRange } from '../ip/range.js';
import { parseRuleSet } from '../rules/validate.js';
import { temporaryDirectory } from '../test-support/snapshot-fixture.js';
import { applyPageDelta, encodePageDelta, readPageDeltaHeader } from './page-delta.js';
import { openSnapshot } from './reader.js';
import { SCHEMA_VERSION } from './schema.js';
import { SnapshotBuildError, writeSnapshot } from './writer.js';

const tmp = temporaryDirectory();
afterAll(() => tmp.remove());

const ruleSet = parseRuleSet({
  rules: [
    { id: 'a', type: 'ip', action: 'block', ranges: ['10.0.0.0/8', '10.1.0.0/16', '::/0'] },
    { id: 'rep', type: 'reputation', action: 'block', lists: ['drop'] },
  ],
});
const drop = { name: 'drop', ranges: parseIpRange('192.0.2.0/24') };

describe('writeSnapshot', () => {
  it('writes meta, rules and flattened ranges, and summarises them', () => {
    const path = join(tmp.dir, 'ok.sqlite');
    const summary = writeSnapshot(path, {
      ruleSet,
      reputation: [drop],
      version: 3,
      createdAt: new Date('2026-11-30T00:00:00Z'),
    });
    // ::/0 splits into IPv6 below the mapped block, the IPv4 space, IPv6 above it.
    expect(summary).toMatchObject({
      schemaVersion: SCHEMA_VERSION,
      version: 3,
      ruleCount: 2,
      rangeCount: 6,
    });
    // 10/8 + 10.1/16 flatten to three IPv4 intervals, then all of IPv4 merges around them.
    expect(summary.storedRanges.reputation).toBe(1);
    const db = new Database(path, { readonly: true });
    const meta = Object.fromEntries(
      (db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map(
        (r) => [r.key, r.value],
      ),
    );
    expect(meta).toMatchObject({
      schema_version: '1',
      snapshot_version: '3',
      created_at: '2026-11-30T00:00:00.000Z',
      rule_count: '2',
    });
    expect(db.prepare('SELECT id, type, action, mode FROM rules ORDER BY position').all()).toEqual([
      { id: 'a', type: 'ip', action: 'block', mode: 'enforce' },
      { id: 'rep', type: 'reputation', action: 'block', mode: 'enforce' },
    ]);
    db.close();
  });

  it('refuses a rule naming a reputation list it was not given, and writes nothing', () => {
    const path = join(tmp.dir, 'missing-list.sqlite');
    expect(() => writeSnapshot(path, { ruleSet, version: 1 })).toThrow(SnapshotBuildError);
    expect(() => writeSnapshot(path, { ruleSet, version: 1 })).toThrow(
      /rules\[1\] \(id "rep"\): lists: reputation list "drop"/,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('refuses duplicate list names and bad versions', () => {
    const path = join(tmp.dir, 'dup.sqlite');
    expect(() => writeSnapshot(path, { ruleSet, reputation: [drop, drop], version: 1 })).toThrow(
      /given twice/,
    );
    expect(() => writeSnapshot(path, { ruleSet, reputation: [drop], version: 0 })).toThrow(
      /positive integer/,
    );
  });

  it('replaces an existing file atomically and leaves no temporary files', () => {
    const path = join(tmp.dir, 'replace.sqlite');
    writeSnapshot(path, { ruleSet, reputation: [drop], version: 1 });
    writeSnapshot(path, { ruleSet, reputation: [drop], version: 2 });
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'snapshot_version'").pluck().get()).toBe(
      '2',
    );
    db.close();
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the page layout a delta relies on', () => {
  const COUNTRIES = ['DE', 'FR', 'NL', 'US', 'BR', 'JP', 'KR', 'IN'];
  // 60 000 IPv4 /24s with alternating labels, so flattening keeps them apart: about 1.2 MB.
  const country = Array.from({ length: 60_000 }, (_, i) => ({
    range: {
      family: 4 as const,
      start: BigInt(0x0b000000 + i * 256),
      end: BigInt(0x0b000000 + i * 256 + 255),
    },
    country: COUNTRIES[i % COUNTRIES.length] ?? 'DE',
  }));
  const asn = Array.from({ length: 30_000 }, (_, i) => ({
    range: {
      family: 4 as const,
      start: BigInt(0x30000000 + i * 512),
      end: BigInt(0x30000000 + i * 512 + 511),
    },
    asn: 64_500 + (i % 200),
    org: `AS ${i % 200}`,
  }));
  const rules = (extra: unknown[]) =>
    parseRuleSet({
      rules: [
        { id: 'geo', type: 'country', action: 'block', countries: ['KR'] },
        { id: 'rep', type: 'reputation', action: 'block', lists: ['drop'] },
        ...extra,
      ],
    });
  const write = (name: string, extra: unknown[], lists = [drop], version = 1) => {
    const path = join(tmp.dir, name);
    writeSnapshot(path, { ruleSet: rules(extra), country, asn, reputation: lists, version });
    return readFileSync(path);
  };

  it('keeps the datasets on the same pages when only rules change: a few pages, whatever their size', () => {
    const before = write('rules-1.sqlite', []);
    const after = write(
      'rules-2.sqlite',
      [
        { id: 'auto-block-1', type: 'ip', action: 'block', ranges: ['203.0.113.7', '2001:db8::7'] },
        {
          id: 'no-wp',
          type: 'pattern',
          action: 'block',
          when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
        },
      ],
      [drop],
      2,
    );
    const delta = encodePageDelta(before, after);
    expect(applyPageDelta(before, delta).equals(after)).toBe(true);
    // The root pages of the five tables: the same count for these 1.1 MB as for the full 26 MB
    // datasets, where it is under 0.1% of the file.
    expect(readPageDeltaHeader(delta).pages).toBeLessThanOrEqual(8);
    expect(after.length).toBeGreaterThan(250 * 4096);
  });

  it('rebuilds a dataset change exactly too (a larger delta, still the same file)', () => {
    const before = write('data-1.sqlite', []);
    const after = write(
      'data-2.sqlite',
      [],
      [{ name: 'drop', ranges: parseIpRange('198.51.100.0/24') }],
      2,
    );
    expect(applyPageDelta(before, encodePageDelta(before, after)).equals(after)).toBe(true);
  });
});

describe('the signal key', () => {
  it('is stored in meta and read back, and refused unless hex', async () => {
    const path = join(tmp.dir, 'signal.sqlite');
    const signalKey = 'ab'.repeat(32);
    writeSnapshot(path, { ruleSet, reputation: [drop], version: 1, signalKey });
    const snapshot = await openSnapshot(path, { integrityCheck: false });
    try {
      expect(snapshot.signalKey).toBe(signalKey);
    } finally {
      snapshot.close();
    }
    expect(() =>
      writeSnapshot(join(tmp.dir, 'bad-key.sqlite'), {
        ruleSet,
        reputation: [drop],
        version: 1,
        signalKey: 'secret',
      }),
    ).toThrow('signalKey must be 32 to 128 lower-case hex digits');
  });
});
