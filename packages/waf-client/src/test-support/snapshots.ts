/**
 * Real snapshot files for tests, written by rules-core's writer (no mocks), and damaged copies
 * of them: truncated, garbled, or with another schema version (edited with better-sqlite3).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';
import Database from 'better-sqlite3';

export interface SnapshotBytes {
  readonly bytes: Buffer;
  readonly sha256: string;
  readonly version: number;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function temporaryDirectory(prefix = 'rampart-client-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A snapshot of `rules` at `version`, as the bytes the hub would serve. */
export function buildSnapshot(
  rules: unknown[],
  version: number,
  options: { readonly signalKey?: string } = {},
): SnapshotBytes {
  const { dir, remove } = temporaryDirectory('rampart-build-');
  try {
    const path = join(dir, 'snapshot.sqlite');
    writeSnapshot(path, { ruleSet: parseRuleSet({ rules }), version, ...options });
    const bytes = readFileSync(path);
    return { bytes, sha256: sha256(bytes), version };
  } finally {
    remove();
  }
}

/** A copy of `snapshot` whose meta table claims another schema version (a valid SQLite file). */
export function withSchemaVersion(snapshot: SnapshotBytes, schemaVersion: number): SnapshotBytes {
  return editDatabase(snapshot, (db) => {
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(schemaVersion));
  });
}

/** A copy of `snapshot` changed by `edit` (hash recomputed: the hub would announce this hash). */
export function editDatabase(
  snapshot: SnapshotBytes,
  edit: (db: Database.Database) => void,
): SnapshotBytes {
  const { dir, remove } = temporaryDirectory('rampart-edit-');
  try {
    const path = join(dir, 'snapshot.sqlite');
    writeFileSync(path, snapshot.bytes);
    const db = new Database(path);
    try {
      db.pragma('journal_mode = DELETE');
      edit(db);
    } finally {
      db.close();
    }
    const bytes = readFileSync(path);
    return { bytes, sha256: sha256(bytes), version: snapshot.version };
  } finally {
    remove();
  }
}

/** Rules used across the tests: one of each decision type. */
export const STANDARD_RULES = [
  { id: 'office', type: 'ip', action: 'allow', ranges: ['198.51.100.0/24'] },
  { id: 'bad-ip', type: 'ip', action: 'block', ranges: ['203.0.113.66', '2001:db8:bad::/48'] },
  {
    id: 'wp',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
  },
  {
    id: 'scanner',
    type: 'pattern',
    action: 'block',
    mode: 'monitor',
    when: [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
  },
  {
    id: 'login',
    type: 'rate_limit',
    methods: ['POST'],
    when: [{ field: 'path', match: 'exact', value: '/login' }],
    key: { kind: 'ip' },
    windowSeconds: 60,
    limit: 3,
  },
];
