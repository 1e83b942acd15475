/**
 * Polls the hub on a worker thread, so that a snapshot download never stalls the app.
 *
 * A download streams tens of megabytes (the body, its gzip decoding, its hash) through the
 * process. On the main thread every chunk is a new off-heap buffer, and that much of them makes
 * V8 run major garbage collections of 5-20 ms while the download is under way: pauses that every
 * request in flight waits through. On a worker thread the chunks live and die in the worker's
 * own heap; the main thread only exchanges two small messages per poll. On Linux the worker
 * thread also lowers its own scheduling priority, so on a saturated host the download takes the
 * CPU that requests leave.
 *
 * The worker is started on the first poll and kept; it holds the process open only while a poll
 * that answers at once is in flight, as the request itself would on the main thread. A blocking
 * poll, which the hub may hold for half a minute, does not: the app decides when to exit. If it dies, the polls in flight
 * fail with a {@link DownloadError} and the next poll starts a new one. It runs the compiled
 * `dist/sync/poll-worker-main.js` of this package.
 *
 * The same thread runs the integrity check of every snapshot the client opens
 * ({@link PollWorker.quickCheck}): a fresh thread per swap would boot a V8 isolate at normal
 * priority, tens of milliseconds of CPU taken from the requests. It also reads the range tables
 * of a data change ({@link PollWorker.loadTables}), so the main thread receives finished arrays
 * instead of reading and checking a million ranges between requests.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { RangeCategory } from '@rampart/rules-core/snapshot/schema';
import type { LoadedTables } from '@rampart/rules-core/snapshot/table-loader';
import { DownloadError, type PollRequest, type PollResult } from './snapshot-download.js';

const WORKER_MAIN = createRequire(import.meta.url).resolve(
  '@rampart/waf-client/sync/poll-worker-main',
);

type Reply =
  | { readonly rampartCheck: number; readonly verdict: string }
  | { readonly rampartTables: number; readonly tables: LoadedTables }
  | { readonly rampartTables: number; readonly error: string }
  | { readonly rampartPoll: number; readonly result: PollResult }
  | {
      readonly rampartPoll: number;
      readonly error: { readonly message: string; readonly download: boolean };
    };

/** A poll's reply as `poll` resolves it, or the error it rejects with. */
function pollResultOf(reply: Reply): PollResult {
  if (!('rampartPoll' in reply)) throw new Error('the poll worker answered out of turn');
  if ('result' in reply) return reply.result;
  throw reply.error.download
    ? new DownloadError(reply.error.message)
    : new Error(reply.error.message);
}

/** A request posted to the worker, waiting for its reply. */
interface Pending {
  readonly settle: (reply: Reply) => void;
  readonly fail: (error: Error) => void;
}

export class PollWorker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Requests that keep the process alive while they are in flight. */
  private readonly keepingAlive = new Set<number>();

  /** `dataDir`: the client's data directory (downloads go to its snapshots folder). */
  constructor(private readonly dataDir: string) {}

  /**
   * One poll of the hub (see `pollHub`); `request.signal` aborts it. A blocking poll
   * (`waitMs` > 0) does not hold the process open.
   */
  poll(request: PollRequest): Promise<PollResult> {
    const { signal, ...plain } = request;
    if (signal.aborted) return Promise.reject(new DownloadError('sync stopped'));
    const id = this.nextId++;
    const abort = () => this.worker?.postMessage({ rampartAbort: id });
    signal.addEventListener('abort', abort, { once: true });
    return this.ask(
      { rampartPoll: id, request: plain },
      id,
      pollResultOf,
      request.waitMs === 0,
    ).finally(() => signal.removeEventListener('abort', abort));
  }

  /**
   * `PRAGMA quick_check` of the file at `path` on the worker (an `IntegrityCheck` for
   * `openSnapshot`): resolves "ok" or what is wrong; rejects only if the worker dies.
   */
  quickCheck(path: string): Promise<string> {
    const id = this.nextId++;
    return this.ask({ rampartCheck: id, path }, id, (reply) =>
      'verdict' in reply ? reply.verdict : 'the poll worker gave no verdict',
    );
  }

  /**
   * Reads the range tables `categories` of the snapshot at `path` on the worker (a
   * `TableLoader` for `openSnapshot`); the arrays arrive transferred, not copied. Rejects with
   * the worker's reason when a table is damaged, or when the worker dies.
   */
  loadTables(path: string, categories: readonly RangeCategory[]): Promise<LoadedTables> {
    const id = this.nextId++;
    return this.ask({ rampartTables: id, path, categories }, id, (reply) => {
      if ('tables' in reply) return reply.tables;
      throw new Error('error' in reply ? String(reply.error) : 'the poll worker sent no tables');
    });
  }

  /**
   * Posts `message` (carrying `id`); its reply becomes what `read` returns, or throws. With
   * `keepAlive` the worker holds the process open until the reply.
   */
  private ask<T>(
    message: object,
    id: number,
    read: (reply: Reply) => T,
    keepAlive = true,
  ): Promise<T> {
    const worker = this.start();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        settle: (reply) => {
          try {
            resolve(read(reply));
          } catch (error) {
            reject(error as Error);
          }
        },
        fail: reject,
      });
      if (keepAlive) {
        this.keepingAlive.add(id);
        worker.ref();
      }
      worker.postMessage(message);
    });
  }

  /**
   * Starts the worker ahead of the first poll, so that its start-up (a thread, modules, the
   * HTTP client) is not paid inside the first poll's idle timeout. It stays unreferenced.
   */
  warm(): void {
    this.start();
  }

  /** Stops the worker; polls still in flight fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_MAIN, { workerData: { dataDir: this.dataDir } });
    if (this.keepingAlive.size === 0) worker.unref();
    worker.on('message', (message: unknown) => this.settle(message));
    const failAll = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        this.keepingAlive.delete(id);
        pending.fail(new DownloadError(`the poll worker ${why}`));
      }
    };
    worker.once('error', (error) => failAll(`failed: ${error.message}`));
    worker.once('exit', (code) => failAll(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private settle(message: unknown): void {
    // Only our own replies count (under `node --watch` Node posts its own notices too).
    if (typeof message !== 'object' || message === null) return;
    const id =
      'rampartPoll' in message
        ? message.rampartPoll
        : 'rampartCheck' in message
          ? message.rampartCheck
          : 'rampartTables' in message
            ? message.rampartTables
            : undefined;
    if (typeof id !== 'number') return;
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    this.keepingAlive.delete(id);
    if (this.keepingAlive.size === 0) this.worker?.unref();
    pending.settle(message as Reply);
  }
}
