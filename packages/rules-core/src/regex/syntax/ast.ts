/**
 * The abstract syntax tree of one sregex pattern, after desugaring.
 *
 * Everything that consumes a byte is a `bytes` node holding a {@link ByteSet} (literals, `.`,
 * classes and escapes alike, with ASCII case folding already applied), so later layers never
 * see characters, flags or escapes. Counted repetition is kept as `repeat` with bounds (the NFA
 * compiler expands it); capture groups are numbered from 1 in order of their `(`.
 */
import type { ByteSet } from './byte-set.js';

/** Zero-width assertions of the dialect (SUBSTITUTION-SPEC point 4). */
export enum Look {
  /** `^`: start of the body or just after `\n`. */
  LineStart = 1,
  /** `$`: just before `\n` or at the end of the body. */
  LineEnd = 2,
  /** `\A`: start of the body. */
  TextStart = 4,
  /** `\z`: end of the body. */
  TextEnd = 8,
  /** `\b`: ASCII word boundary. */
  WordBoundary = 16,
  /** `\B`: not an ASCII word boundary. */
  NotWordBoundary = 32,
}

export type Node =
  | { readonly type: 'empty' }
  | { readonly type: 'bytes'; readonly set: ByteSet }
  | { readonly type: 'look'; readonly look: Look }
  | { readonly type: 'group'; readonly index: number; readonly body: Node }
  | { readonly type: 'concat'; readonly items: readonly Node[] }
  | { readonly type: 'alt'; readonly items: readonly Node[] }
  | {
      readonly type: 'repeat';
      readonly body: Node;
      readonly min: number;
      /** Inclusive upper bound; `Infinity` for `*`, `+` and `{n,}`. */
      readonly max: number;
      readonly greedy: boolean;
    };

export interface ParsedPattern {
  readonly ast: Node;
  /** Number of capture groups (`(...)`), not counting group 0 (the whole match). */
  readonly groupCount: number;
}
