/**
 * The worker thread of {@link PollWorker} (`poll-worker.ts`): runs `pollHub` for each request
 * the main thread posts and posts the result back. Its own heap takes the download's garbage.
 * It also runs the integrity check of each snapshot the client opens (`quickCheck`), so that a
 * swap starts no thread of its own, and reads the range tables a new snapshot does not share
 * with the one in use (`loadTablesNow`), transferring the arrays to the main thread.
 *
 * Messages in: `{ rampartPoll: id, request }` (a PollRequest without its signal),
 * `{ rampartAbort: id }`, `{ rampartCheck: id, path }` and `{ rampartTables: id, path,
 * categories }`. Out: `{ rampartPoll: id, result }`, `{ rampartPoll: id, error }`,
 * `{ rampartCheck: id, verdict }`, `{ rampartTables: id, tables }` or
 * `{ rampartTables: id, error }`.
 */
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { quickCheck } from '@rampart/rules-core/snapshot/integrity-check';
import type { RangeCategory } from '@rampart/rules-core/snapshot/schema';
import { loadTablesNow, transferListOf } from '@rampart/rules-core/snapshot/table-loader';
import { GuardedLogger } from '../logging/logger.js';
import { DownloadError, type PollRequest, pollHub } from './snapshot-download.js';
import { SnapshotStore } from './snapshot-store.js';

interface Data {
  readonly dataDir: string;
}

type Incoming =
  | { readonly rampartPoll: number; readonly request: Omit<PollRequest, 'signal'> }
  | { readonly rampartAbort: number }
  | { readonly rampartCheck: number; readonly path: string }
  | {
      readonly rampartTables: number;
      readonly path: string;
      readonly categories: readonly RangeCategory[];
    };

const port = parentPort;
if (port === null) throw new Error('poll-worker-main runs as a worker thread only');

// A download is background work: on a busy host it should take CPU the app's requests do not
// need. On Linux the nice value belongs to the thread, so this lowers this thread only; elsewhere
// it would lower the whole process, so it is left alone there.
if (process.platform === 'linux') {
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // not permitted (some containers): the download runs at normal priority
  }
}

// pollHub only names paths and checks for files: the store logs nothing here.
const silent = { info() {}, warn() {}, error() {} };
const store = new SnapshotStore((workerData as Data).dataDir, new GuardedLogger(silent, ''));
const running = new Map<number, AbortController>();

// Node loads fetch's implementation on its first call: do it now, while no poll waits on it.
void fetch('data:,').then(
  (response) => response.arrayBuffer(),
  () => undefined,
);

port.on('message', (message: Incoming) => {
  if ('rampartAbort' in message) {
    running.get(message.rampartAbort)?.abort();
    return;
  }
  if ('rampartCheck' in message) {
    // Synchronous: this thread does nothing else meanwhile (the client opens a snapshot only
    // after its poll has settled, and polls never overlap).
    port.postMessage({ rampartCheck: message.rampartCheck, verdict: quickCheck(message.path) });
    return;
  }
  if ('rampartTables' in message) {
    const id = message.rampartTables;
    try {
      const tables = loadTablesNow(message.path, message.categories);
      // Transferred, not copied: the main thread receives the arrays without touching them.
      port.postMessage({ rampartTables: id, tables }, transferListOf(tables));
    } catch (error) {
      port.postMessage({
        rampartTables: id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    return;
  }
  const id = message.rampartPoll;
  const controller = new AbortController();
  running.set(id, controller);
  pollHub({ ...message.request, signal: controller.signal }, store).then(
    (result) => port.postMessage({ rampartPoll: id, result }),
    (error: unknown) =>
      port.postMessage({
        rampartPoll: id,
        error: {
          message: error instanceof Error ? error.message : String(error),
          download: error instanceof DownloadError,
        },
      }),
  );
  controller.signal.addEventListener('abort', () => running.delete(id), { once: true });
});
