/**
 * Writes report groups to the embedded SQLite database on a thread of its own.
 *
 * better-sqlite3's calls are synchronous: on the event loop, the statements of a group (most of
 * the cost of ingestion: thousands of counter upserts and event rows) stopped the endpoint, the
 * queue's workers and every other request for as long as they ran. Here they run on a worker
 * thread with its own connection (WAL: the event loop's connection keeps reading meanwhile, and
 * its few writes wait for the lock, `busy_timeout`), so on a machine with a spare core the
 * endpoint and the writes overlap.
 *
 * A thread that fails or exits fails the groups it had and is started again for the next one.
 */
import { Worker } from 'node:worker_threads';
import type { GroupEntry } from './report-group.js';

/** What the thread is started with. */
export interface WriterOptions {
  readonly file: string;
  /** The raw events kept per site and second (`EventSample`). */
  readonly eventsPerSecond: number;
}

export interface WriterRequest {
  readonly id: number;
  readonly group: readonly GroupEntry[];
  readonly receivedAt: string;
}

export type WriterAnswer =
  | { readonly id: number; readonly stored: boolean[] }
  | { readonly id: number; readonly error: string };

interface Pending {
  readonly resolve: (stored: boolean[]) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The thread's script. Run from source (the unit tests), the compiled one: Node's type stripping
 * would not find the worker's `.js` imports among the `.ts` sources (turbo builds the hub before
 * its tests).
 */
const WORKER_SCRIPT = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/reports/sqlite-report-writer.worker.js', import.meta.url)
  : new URL('./sqlite-report-writer.worker.js', import.meta.url);

/** How long `close` waits for the groups in flight before ending the thread. */
const CLOSE_TIMEOUT_MS = 10_000;

export class SqliteReportWriter {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly options: WriterOptions) {}

  /** Writes `group` in one transaction; resolves, per entry, whether its batch was new. */
  write(group: readonly GroupEntry[], receivedAt: string): Promise<boolean[]> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.thread().postMessage({ id, group, receivedAt } satisfies WriterRequest);
    });
  }

  /** Ends the thread once the groups it has are written. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SCRIPT, { workerData: this.options });
    worker.unref(); // an idle writer never keeps the process alive
    worker.on('message', (answer: WriterAnswer) => {
      const pending = this.pending.get(answer.id);
      if (pending === undefined) return;
      this.pending.delete(answer.id);
      if ('stored' in answer) pending.resolve(answer.stored);
      else pending.reject(new Error(answer.error));
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.reject(error);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.pending.size > 0) fail(new Error(`the SQLite report writer exited (${code})`));
      else if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }
}
