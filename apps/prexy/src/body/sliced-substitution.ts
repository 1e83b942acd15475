/**
 * The substitution of one response body: the engine's {@link Substituter} fed in slices, so one
 * large body never holds the event loop. A chunk is fed {@link SLICE_BYTES} at a time; once
 * this body has spent {@link TURN_BUDGET_MS} in the engine since it last yielded, the rest of
 * the chunk waits for the next turn (`setImmediate`), letting every other connection of this
 * worker read, write and substitute first.
 *
 * Why the budget spans chunks: libuv reads a readable socket up to 32 times per poll event,
 * and undici hands each read to the proxy at once, so a fast upstream delivers many chunks
 * within one turn. A budget per chunk would let a large body run for all of them; a budget per
 * body makes each large body give way after about a millisecond whatever its chunking. While a
 * chunk waits, its caller keeps the upstream paused (see `direct-body.ts` and the stream form,
 * {@link SlicedSubstitution}), so the engine is never handed more than it can take.
 *
 * `substitutionMs` is the time spent in the engine (not waiting): the `substitution` figure of
 * the timing trailer.
 */
import { performance } from 'node:perf_hooks';
import { Transform, type TransformCallback } from 'node:stream';
import type { CompiledRuleSet } from '@rampart/rules-core/substitution/rule-set';
import { Substituter, type SubstitutionStats } from '@rampart/rules-core/substitution/substituter';

export const SLICE_BYTES = 16 * 1024;
export const TURN_BUDGET_MS = 1;

export class SlicedSubstituter {
  private readonly substituter: Substituter;
  private spent = 0;
  /** Engine time since this body last yielded to the event loop. */
  private sinceYield = 0;

  constructor(set: CompiledRuleSet, maxBufferedBytes: number, warn: (message: string) => void) {
    this.substituter = new Substituter(set, { maxBufferedBytes, warn });
  }

  get stats(): SubstitutionStats {
    return this.substituter.stats;
  }

  get substitutionMs(): number {
    return this.spent;
  }

  /**
   * Feeds `chunk`, handing each piece of output to `emit` in order, then calls `done`: before
   * returning when the budget allows, else from a later turn. `done(error)` when the engine
   * throws (nothing more is fed). The caller feeds the next chunk only after `done`.
   */
  feed(chunk: Buffer, emit: (out: Buffer) => void, done: (error?: Error) => void): void {
    let at = 0;
    const slice = (): void => {
      try {
        while (at < chunk.length) {
          if (this.sinceYield >= TURN_BUDGET_MS) {
            this.sinceYield = 0;
            setImmediate(slice);
            return;
          }
          const start = performance.now();
          const end = Math.min(chunk.length, at + SLICE_BYTES);
          const out = this.substituter.feed(chunk.subarray(at, end));
          at = end;
          const took = performance.now() - start;
          this.spent += took;
          this.sinceYield += took;
          if (out.length > 0) emit(out);
        }
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    };
    slice();
  }

  /** The rest of the output (the end of the body settles pending matches); throws on failure. */
  end(): Buffer {
    const start = performance.now();
    const out = this.substituter.end();
    this.spent += performance.now() - start;
    return out;
  }
}

/** The same as a stream stage, for bodies that are decoded and encoded around it. */
export class SlicedSubstitution extends Transform {
  readonly substituter: SlicedSubstituter;

  constructor(set: CompiledRuleSet, maxBufferedBytes: number, warn: (message: string) => void) {
    super();
    this.substituter = new SlicedSubstituter(set, maxBufferedBytes, warn);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.substituter.feed(chunk, (out) => this.push(out), done);
  }

  override _flush(done: TransformCallback): void {
    let out: Buffer;
    try {
      out = this.substituter.end();
    } catch (error) {
      done(error as Error);
      return;
    }
    if (out.length > 0) this.push(out);
    done();
  }
}
