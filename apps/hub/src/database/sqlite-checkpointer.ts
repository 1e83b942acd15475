/**
 * Checkpoints the embedded SQLite database's write-ahead log on a thread of its own.
 *
 * In WAL mode every commit appends pages to the log, and the pages must be copied back into the
 * database file (a checkpoint, with an fsync) before the log can start over. SQLite does that by
 * itself in the connection whose commit crosses `wal_autocheckpoint` pages: in the hub, the one
 * connection on the event loop, which then stops for as long as the copy and the fsync take
 * (about a seventh of the time of report ingestion under load). Here a worker thread checkpoints
 * every {@link CHECKPOINT_INTERVAL_MS} with its own connection, concurrently with the hub's
 * writes; the hub's connection keeps a much higher threshold of its own
 * ({@link FALLBACK_CHECKPOINT_PAGES}), so the log stays bounded even if this thread stopped.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '@nestjs/common';

export const CHECKPOINT_INTERVAL_MS = 250;
/** 40 MB of 4 KiB pages (SQLite's own default is 1 000). */
export const FALLBACK_CHECKPOINT_PAGES = 10_000;

export interface Checkpointer {
  /** Ends the thread (its last checkpoint finished) and closes its connection. */
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, logger: Logger): Checkpointer {
  // From source (the unit tests) the worker is TypeScript too, run by Node's type stripping.
  const script = import.meta.url.endsWith('.ts')
    ? 'sqlite-checkpoint.worker.ts'
    : 'sqlite-checkpoint.worker.js';
  const worker = new Worker(new URL(`./${script}`, import.meta.url), {
    workerData: { file, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref(); // never what keeps the process alive
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  worker.on('error', (error) =>
    logger.warn(
      `the SQLite checkpoint thread failed (${error.message}); the hub checkpoints itself`,
    ),
  );
  return {
    stop: async () => {
      if (exited) return;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}
