/**
 * Worker-thread entry of the SQLite checkpointer (`sqlite-checkpointer.ts`): its own connection
 * to the hub's database file, checkpointing the WAL every `intervalMs` (PASSIVE: it never waits
 * for the hub's reader or writer, and they never wait for it) until it is told to stop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new SQLite(file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Locked by a schema change or a checkpoint of the hub's own connection: the next tick.
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
