/**
 * A Node `Transform` around {@link Substituter}: pipe a response body through it. Statistics
 * (which rules matched, how often, whether the buffer limit was hit) are on `stats` once the
 * stream has finished.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { CompiledRuleSet } from './rule-set.js';
import { Substituter, type SubstituterOptions, type SubstitutionStats } from './substituter.js';

export class SubstitutionStream extends Transform {
  private readonly substituter: Substituter;

  constructor(set: CompiledRuleSet, options: SubstituterOptions = {}) {
    super();
    this.substituter = new Substituter(set, options);
  }

  get stats(): SubstitutionStats {
    return this.substituter.stats;
  }

  override _transform(chunk: unknown, encoding: BufferEncoding, done: TransformCallback): void {
    try {
      const bytes =
        typeof chunk === 'string' ? Buffer.from(chunk, encoding) : (chunk as Uint8Array);
      const out = this.substituter.feed(bytes);
      if (out.length > 0) this.push(out);
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      const out = this.substituter.end();
      if (out.length > 0) this.push(out);
      done();
    } catch (error) {
      done(error as Error);
    }
  }
}

/** Convenience: a substitution stream for a compiled rule set. */
export function createSubstitutionStream(
  set: CompiledRuleSet,
  options: SubstituterOptions = {},
): SubstitutionStream {
  return new SubstitutionStream(set, options);
}
