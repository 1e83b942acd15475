/**
 * A Thompson NFA over bytes holding every rule of a set, with rule priority.
 *
 * Contract:
 * - State 0 is the anchored start of the whole set: a split over the rules' starts in rule
 *   order, so an earlier rule has priority over a later one at the same start position.
 * - Each rule `r` compiles to `capture(0) body capture(1) match(r)`; its groups `i` record into
 *   slots `2i` and `2i+1`. Split alternatives are in priority order (Perl order: alternation left
 *   to right, greedy "take" before "skip", lazy the reverse), which is what leftmost-first
 *   simulations (lazy DFA, Pike VM) rely on.
 * - Counted repetition is expanded (`x{2,4}` = `xx(?:x(?:x)?)?`), so the NFA is bounded by
 *   {@link MAX_NFA_STATES}; larger sets are rejected with {@link NfaTooLargeError}.
 * - Assertions stay as `Look` states; simulations resolve them with the bytes around the
 *   position (see `look.ts`).
 */
import type { Node } from '../syntax/ast.js';
import type { ByteSet } from '../syntax/byte-set.js';

export enum StateKind {
  /** Consumes one byte of `sets[arg]`, then goes to `next`. */
  Bytes = 0,
  /** Epsilon to each of `alts[id]`, in priority order. */
  Split = 1,
  /** Zero-width assertion `arg` (a `Look` bit), then `next`. */
  Look = 2,
  /** Records the position into capture slot `arg`, then `next`. */
  Capture = 3,
  /** Rule `arg` matched. */
  Match = 4,
}

/** More states than this (after expanding counted repetition) is refused at compile time. */
export const MAX_NFA_STATES = 250_000;

export class NfaTooLargeError extends Error {
  constructor(readonly rule: number) {
    super(`the compiled pattern exceeds ${MAX_NFA_STATES} automaton states`);
    this.name = 'NfaTooLargeError';
  }
}

export interface Nfa {
  readonly stateCount: number;
  readonly kind: Uint8Array;
  readonly next: Int32Array;
  readonly arg: Int32Array;
  /** Alternatives of split states (empty for other kinds). */
  readonly alts: ReadonlyArray<Int32Array>;
  /** Byte sets, indexed by a `Bytes` state's `arg`; `members[i][b]` is 1 when b is in set i. */
  readonly sets: readonly ByteSet[];
  readonly members: readonly Uint8Array[];
  /** Start state of each rule (anchored at the rule's own `capture(0)`). */
  readonly ruleStarts: Int32Array;
  /** First and last state id of each rule: a rule's states are contiguous. */
  readonly ruleRanges: ReadonlyArray<{ readonly first: number; readonly last: number }>;
  /** Capture groups of each rule, not counting group 0. */
  readonly groupCounts: Int32Array;
  /** Union of the `Look` bits used anywhere. */
  readonly looks: number;
}

export interface NfaRule {
  readonly ast: Node;
  readonly groupCount: number;
}

/** Compiles the rules, in priority order, into one NFA. */
export function compileNfa(rules: readonly NfaRule[]): Nfa {
  const b = new Builder();
  const root = b.add(StateKind.Split, -1, 0);
  const ruleStarts = new Int32Array(rules.length);
  const ruleRanges: Array<{ first: number; last: number }> = [];
  rules.forEach((rule, index) => {
    b.rule = index;
    const match = b.add(StateKind.Match, -1, index);
    const end = b.add(StateKind.Capture, match, 1);
    const body = b.compile(rule.ast, end);
    ruleStarts[index] = b.add(StateKind.Capture, body, 0);
    ruleRanges.push({ first: match, last: ruleStarts[index] as number });
  });
  b.alts[root] = Int32Array.from(ruleStarts);
  return b.finish(
    ruleStarts,
    ruleRanges,
    Int32Array.from(rules, (r) => r.groupCount),
  );
}

class Builder {
  readonly kind: number[] = [];
  readonly next: number[] = [];
  readonly arg: number[] = [];
  readonly alts: Int32Array[] = [];
  readonly sets: ByteSet[] = [];
  private readonly setIndex = new Map<string, number>();
  looks = 0;
  rule = 0;

  add(kind: StateKind, next: number, arg: number): number {
    const id = this.kind.length;
    if (id >= MAX_NFA_STATES) throw new NfaTooLargeError(this.rule);
    this.kind.push(kind);
    this.next.push(next);
    this.arg.push(arg);
    this.alts.push(EMPTY);
    return id;
  }

  split(alts: number[]): number {
    const id = this.add(StateKind.Split, -1, 0);
    this.alts[id] = Int32Array.from(alts);
    return id;
  }

  private setId(set: ByteSet): number {
    const key = set
      .toRanges()
      .map(([lo, hi]) => `${lo}-${hi}`)
      .join(',');
    let id = this.setIndex.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.sets.push(set);
      this.setIndex.set(key, id);
    }
    return id;
  }

  /** Compiles `node` so that it continues to `next`; returns its entry state. */
  compile(node: Node, next: number): number {
    switch (node.type) {
      case 'empty':
        return next;
      case 'bytes':
        return this.add(StateKind.Bytes, next, this.setId(node.set));
      case 'look':
        this.looks |= node.look;
        return this.add(StateKind.Look, next, node.look);
      case 'group': {
        const close = this.add(StateKind.Capture, next, 2 * node.index + 1);
        return this.add(StateKind.Capture, this.compile(node.body, close), 2 * node.index);
      }
      case 'concat': {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) {
          entry = this.compile(node.items[i] as Node, entry);
        }
        return entry;
      }
      case 'alt':
        return this.split(node.items.map((item) => this.compile(item, next)));
      case 'repeat':
        return this.repeat(node.body, node.min, node.max, node.greedy, next);
    }
  }

  private repeat(body: Node, min: number, max: number, greedy: boolean, next: number): number {
    let entry: number;
    if (max === Infinity) {
      const loop = this.split([]);
      const inner = this.compile(body, loop);
      this.alts[loop] = Int32Array.from(greedy ? [inner, next] : [next, inner]);
      entry = loop;
    } else {
      entry = next;
      for (let i = min; i < max; i++) {
        const take = this.compile(body, entry);
        entry = this.split(greedy ? [take, next] : [next, take]);
      }
    }
    for (let i = 0; i < min; i++) entry = this.compile(body, entry);
    return entry;
  }

  finish(ruleStarts: Int32Array, ruleRanges: Nfa['ruleRanges'], groupCounts: Int32Array): Nfa {
    return {
      ruleRanges,
      stateCount: this.kind.length,
      kind: Uint8Array.from(this.kind),
      next: Int32Array.from(this.next),
      arg: Int32Array.from(this.arg),
      alts: this.alts,
      sets: this.sets,
      members: this.sets.map((set) =>
        Uint8Array.from({ length: 256 }, (_, b) => (set.has(b) ? 1 : 0)),
      ),
      ruleStarts,
      groupCounts,
      looks: this.looks,
    };
  }
}

const EMPTY = new Int32Array(0);
