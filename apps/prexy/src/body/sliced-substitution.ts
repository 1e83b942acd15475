/**
 * The substitution stage of a response: the engine's {@link Substituter} fed in slices, so one
 * large body never holds the event loop. A chunk is fed {@link SLICE_BYTES} at a time; once a
 * turn has spent {@link TURN_BUDGET_MS}, the rest of the chunk waits for the next turn
 * (`setImmediate`), letting every other connection of this worker read, write and substitute
 * first. The stream's own backpressure then slows the upstream read.
 *
 * `substitutionMs` is the time spent in the engine (not waiting): the `substitution` figure of
 * the timing trailer.
 */
import { performance } from 'node:perf_hooks';
import { Transform, type TransformCallback } from 'node:stream';
import type { CompiledRuleSet } from '@rampart/rules-core/substitution/rule-set';
import { Substituter, type SubstitutionStats } from '@rampart/rules-core/substitution/substituter';

export const SLICE_BYTES = 16 * 1024;
export const TURN_BUDGET_MS = 2;

export class SlicedSubstitution extends Transform {
  private readonly substituter: Substituter;
  private spent = 0;

  constructor(set: CompiledRuleSet, maxBufferedBytes: number, warn: (message: string) => void) {
    super();
    this.substituter = new Substituter(set, { maxBufferedBytes, warn });
  }

  get stats(): SubstitutionStats {
    return this.substituter.stats;
  }

  get substitutionMs(): number {
    return this.spent;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    const slice = (): void => {
      const turn = performance.now();
      try {
        while (at < chunk.length) {
          const end = Math.min(chunk.length, at + SLICE_BYTES);
          const out = this.substituter.feed(chunk.subarray(at, end));
          at = end;
          if (out.length > 0) this.push(out);
          if (at < chunk.length && performance.now() - turn >= TURN_BUDGET_MS) {
            this.spent += performance.now() - turn;
            setImmediate(slice);
            return;
          }
        }
      } catch (error) {
        done(error as Error);
        return;
      }
      this.spent += performance.now() - turn;
      done();
    };
    slice();
  }

  override _flush(done: TransformCallback): void {
    const start = performance.now();
    try {
      const out = this.substituter.end();
      if (out.length > 0) this.push(out);
    } catch (error) {
      done(error as Error);
      return;
    }
    this.spent += performance.now() - start;
    done();
  }
}
