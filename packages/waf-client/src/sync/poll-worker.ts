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
 * is in flight, as the request itself would on the main thread. If it dies, the polls in flight fail with a {@link DownloadError} and the next poll
 * starts a new one. It runs the compiled `dist/sync/poll-worker-main.js` of this package.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { DownloadError, type PollRequest, type PollResult } from './snapshot-download.js';

const WORKER_MAIN = createRequire(import.meta.url).resolve(
  '@rampart/waf-client/sync/poll-worker-main',
);

interface Pending {
  readonly resolve: (result: PollResult) => void;
  readonly reject: (error: Error) => void;
}

type Reply =
  | { readonly rampartPoll: number; readonly result: PollResult }
  | {
      readonly rampartPoll: number;
      readonly error: { readonly message: string; readonly download: boolean };
    };

export class PollWorker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  /** `dataDir`: the client's data directory (downloads go to its snapshots folder). */
  constructor(private readonly dataDir: string) {}

  /** One poll of the hub (see `pollHub`); `request.signal` aborts it. */
  poll(request: PollRequest): Promise<PollResult> {
    const { signal, ...plain } = request;
    if (signal.aborted) return Promise.reject(new DownloadError('sync stopped'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<PollResult>((resolve, reject) => {
      const abort = () => worker.postMessage({ rampartAbort: id });
      signal.addEventListener('abort', abort, { once: true });
      this.pending.set(id, {
        resolve: (result) => {
          signal.removeEventListener('abort', abort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', abort);
          reject(error);
        },
      });
      worker.ref();
      worker.postMessage({ rampartPoll: id, request: plain });
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
    if (this.pending.size === 0) worker.unref();
    worker.on('message', (message: unknown) => this.settle(message));
    const failAll = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.reject(new DownloadError(`the poll worker ${why}`));
      }
    };
    worker.once('error', (error) => failAll(`failed: ${error.message}`));
    worker.once('exit', (code) => failAll(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private settle(message: unknown): void {
    // Only our own replies count (under `node --watch` Node posts its own notices too).
    if (typeof message !== 'object' || message === null || !('rampartPoll' in message)) return;
    const reply = message as Reply;
    const pending = this.pending.get(reply.rampartPoll);
    if (!pending) return;
    this.pending.delete(reply.rampartPoll);
    if (this.pending.size === 0) this.worker?.unref();
    if ('result' in reply) pending.resolve(reply.result);
    else
      pending.reject(
        reply.error.download
          ? new DownloadError(reply.error.message)
          : new Error(reply.error.message),
      );
  }
}
