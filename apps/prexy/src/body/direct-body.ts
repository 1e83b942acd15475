/**
 * A substituted body whose coding does not change (identity in, identity out: the common case)
 * written straight to the response, without a stream pipeline: upstream chunk -> engine (in
 * slices, see `sliced-substitution.ts`) -> `res.write`. Every stream stage costs per chunk
 * (callbacks, ticks, buffering) and per response (construction, end-of-stream listeners,
 * teardown errors); for a 100 KiB page that was about as much CPU as the engine itself.
 *
 * Flow control is explicit: the upstream is paused while a chunk waits for its next slice,
 * while chunks are queued, or while the response's socket buffer is full (`res.write` returned
 * false, until `drain`), and resumed when all three clear. So a slow client still bounds what
 * prexy reads from the upstream.
 */
import type { ServerResponse } from 'node:http';
import type { SlicedSubstituter } from './sliced-substitution.js';

/** The upstream side, as undici's dispatch controller offers it. */
export interface UpstreamFlow {
  pause(): void;
  resume(): void;
}

export interface DirectBodyEvents {
  /** Bytes written to the client. */
  readonly bytes: (n: number) => void;
  /** The body is complete, just before `res.end()` (for the timing trailer). */
  readonly beforeEnd: () => void;
  /** Once: the body ended (no error) or failed (the engine threw; the response is destroyed). */
  readonly done: (error: Error | undefined) => void;
}

export class DirectBody {
  private readonly queue: Buffer[] = [];
  private feeding = false;
  private waitingDrain = false;
  private ending = false;
  private finished = false;
  private paused = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly substituter: SlicedSubstituter,
    private readonly upstream: UpstreamFlow,
    private readonly events: DirectBodyEvents,
  ) {}

  /** The next upstream chunk. */
  write(chunk: Buffer): void {
    this.queue.push(chunk);
    this.pump();
  }

  /** The upstream body is complete. */
  end(): void {
    this.ending = true;
    this.pump();
  }

  private pump(): void {
    while (!this.feeding && !this.finished) {
      if (this.res.destroyed) return;
      const chunk = this.queue.shift();
      if (chunk === undefined) break;
      this.feeding = true;
      let inFeed = true;
      this.substituter.feed(
        chunk,
        (out) => this.send(out),
        (error) => {
          this.feeding = false;
          if (error !== undefined) this.fail(error);
          else if (!inFeed) this.pump();
        },
      );
      inFeed = false;
    }
    if (!this.feeding && this.queue.length === 0 && this.ending && !this.finished) this.complete();
    this.flow();
  }

  private send(out: Buffer): void {
    if (this.res.destroyed) return;
    this.events.bytes(out.length);
    if (!this.res.write(out) && !this.waitingDrain) {
      this.waitingDrain = true;
      this.res.once('drain', () => {
        this.waitingDrain = false;
        this.flow();
      });
    }
  }

  private complete(): void {
    let rest: Buffer;
    try {
      rest = this.substituter.end();
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    this.finished = true;
    if (rest.length > 0) this.send(rest);
    this.events.beforeEnd();
    this.res.end();
    this.events.done(undefined);
  }

  private fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.res.destroy(error);
    this.events.done(error);
  }

  /** Pauses the upstream while anything is pending, resumes it once nothing is. */
  private flow(): void {
    const hold = !this.finished && (this.feeding || this.waitingDrain || this.queue.length > 0);
    if (hold && !this.paused) {
      this.paused = true;
      this.upstream.pause();
    } else if (!hold && this.paused) {
      this.paused = false;
      this.upstream.resume();
    }
  }
}
