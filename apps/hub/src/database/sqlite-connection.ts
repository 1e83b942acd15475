/**
 * A connection to the hub's embedded SQLite file, set up the same way on every thread that
 * writes to it (the event loop's, and the report writer's): write-ahead log, foreign keys, a
 * wait for the other writer's lock instead of an error, and a high automatic-checkpoint
 * threshold (the checkpoint thread, `sqlite-checkpointer.ts`, keeps the log short).
 */
import SQLite from 'better-sqlite3';
import { FALLBACK_CHECKPOINT_PAGES } from './sqlite-checkpointer.js';

/** How long a writer waits for another connection's write lock before failing. */
const BUSY_TIMEOUT_MS = 5000;

export function openSqlite(path: string): SQLite.Database {
  const file = new SQLite(path);
  file.pragma('journal_mode = WAL');
  file.pragma('foreign_keys = ON');
  file.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  file.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
  return file;
}
