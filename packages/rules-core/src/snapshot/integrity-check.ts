/**
 * `PRAGMA quick_check` of a snapshot file, off the thread that serves requests.
 *
 * The check reads the whole file (tens of megabytes for a full snapshot), so it never runs on a
 * server's main thread. Two ways to run it:
 * - {@link quickCheckOnWorker}: a worker thread started for the one check. Right for one-off
 *   opens (the CLI, tests, a first load at start).
 * - {@link quickCheck} on a thread the caller keeps, passed to `openSnapshot` as its
 *   `integrityCheck`: right for a client that swaps snapshots under load, where booting a new
 *   thread per swap (a V8 isolate and Node's bootstrap, at normal priority) takes CPU from the
 *   requests.
 *
 * Both give "ok" or SQLite's description of the damage; a file that cannot be opened at all
 * gives the error's message.
 */
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** Runs the check for the file at a path; resolves "ok" or what is wrong with it. */
export type IntegrityCheck = (path: string) => Promise<string>;

/** The check, synchronously, on its own read-only connection. Blocks for the whole read. */
export function quickCheck(path: string): string {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return verdictOf(db.pragma('quick_check') as Record<string, unknown>[]);
    } finally {
      db.close();
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function verdictOf(rows: readonly Record<string, unknown>[]): string {
  return rows.map((row) => String(Object.values(row)[0])).join('; ');
}

/** The check on a worker thread started for it (at a lower priority on Linux). */
export function quickCheckOnWorker(path: string): Promise<string> {
  // The worker imports this very module and runs quickCheck. It is started from evaluated
  // source so that it works whether this module is compiled `dist` JavaScript or, under test,
  // its TypeScript source (Node strips the types).
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const os = require('node:os');
    // Background work: on Linux the nice value is per thread, so this thread alone yields the CPU
    // to the server's requests (elsewhere it would lower the whole process: left alone).
    if (process.platform === 'linux') {
      try { os.setPriority(os.constants.priority.PRIORITY_BELOW_NORMAL); } catch {}
    }
    import(workerData.module)
      .then((checks) => checks.quickCheck(workerData.path))
      .then((verdict) => parentPort.postMessage({ rampartQuickCheck: verdict }));
  `;
  return new Promise((resolve) => {
    const worker = new Worker(source, {
      eval: true,
      workerData: { module: import.meta.url, path },
    });
    // Only our own message counts: under `node --watch`, Node itself posts module-loading
    // notices from every thread.
    worker.on('message', (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'rampartQuickCheck' in message) {
        resolve(String((message as { rampartQuickCheck: unknown }).rampartQuickCheck));
      }
    });
    worker.once('error', (error) => resolve(`integrity worker failed: ${error.message}`));
    worker.once('exit', (code) => resolve(`integrity worker exited with code ${code}`));
  });
}
