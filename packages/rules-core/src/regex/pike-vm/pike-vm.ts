/**
 * A Pike VM that recovers the capture groups of one rule over a span the lazy DFA has already
 * confirmed as that rule's match.
 *
 * Contract: given a rule and a span `[start, end)` of `bytes` that the rule matches (anchored at
 * `start`), returns the slots (group i at `2i`, `2i + 1`; -1 when the group did not participate)
 * of the highest-priority (Perl order) path that ends exactly at `end`. For a leftmost-first
 * match that is the path Perl would report; for leftmost-longest it is the Perl-preferred path
 * among the longest ones. Returns `undefined` if no path ends at `end` (a bug in the caller).
 *
 * Cost: O((end - start) * states of the rule); threads are simulated in lock step, so no input
 * makes it backtrack. It only runs for rules whose replacement uses `$1`..`$N`: the DFA alone
 * finds spans and rules (the "no capture tracking unless a replacement uses groups" rule).
 */
import { behindFacts, END_OF_INPUT, lookHolds } from '../nfa/look.js';
import { type Nfa, StateKind } from '../nfa/nfa.js';

export class PikeVm {
  private readonly first: number;
  private readonly slotCount: number;
  private readonly capacity: number;
  private cur: ThreadList;
  private nxt: ThreadList;
  private readonly scratch: Int32Array;
  private readonly stack: number[] = [];

  /** `first`/`last`: the contiguous NFA state range of the rule. */
  constructor(
    private readonly nfa: Nfa,
    private readonly rule: number,
    range: { readonly first: number; readonly last: number },
  ) {
    this.first = range.first;
    this.capacity = range.last - range.first + 1;
    this.slotCount = 2 * ((nfa.groupCounts[rule] as number) + 1);
    this.cur = new ThreadList(this.capacity, this.slotCount);
    this.nxt = new ThreadList(this.capacity, this.slotCount);
    this.scratch = new Int32Array(this.slotCount);
  }

  /**
   * Slots of the rule's match over `bytes[start, end)`; positions are indices into `bytes`.
   * `prev` is the byte before `start` (-1 at the start of the body), `next` the byte at `end`
   * (END_OF_INPUT at the end of the body).
   */
  captures(
    bytes: Uint8Array,
    start: number,
    end: number,
    prev: number,
    next: number,
  ): Int32Array | undefined {
    const byteAt = (pos: number) => (pos < end ? (bytes[pos] as number) : next);
    const behindAt = (pos: number) =>
      behindFacts(pos === start ? prev : (bytes[pos - 1] as number));
    this.cur.clear();
    this.scratch.fill(-1);
    this.addThread(
      this.cur,
      this.nfa.ruleStarts[this.rule] as number,
      start,
      behindAt(start),
      byteAt(start),
    );
    const { kind, arg, members } = this.nfa;
    for (let pos = start; pos < end; pos++) {
      const b = bytes[pos] as number;
      const nextList = this.nxt;
      nextList.clear();
      const behind = behindFacts(b);
      const ahead = byteAt(pos + 1);
      const list = this.cur;
      for (let i = 0; i < list.size; i++) {
        const s = list.states[i] as number;
        if (kind[s] !== StateKind.Bytes) continue;
        if ((members[arg[s] as number] as Uint8Array)[b] !== 1) continue;
        this.scratch.set(list.slotsOf(i));
        this.addThread(nextList, this.nfa.next[s] as number, pos + 1, behind, ahead);
      }
      this.nxt = this.cur;
      this.cur = nextList;
      if (nextList.size === 0) return undefined;
    }
    const list = this.cur;
    for (let i = 0; i < list.size; i++) {
      const s = list.states[i] as number;
      if (kind[s] === StateKind.Match) return Int32Array.from(list.slotsOf(i));
    }
    return undefined;
  }

  /** Follows epsilons from `start` in priority order, recording captures at `pos`. */
  private addThread(list: ThreadList, start: number, pos: number, behind: number, ahead: number) {
    const { kind, next, arg, alts } = this.nfa;
    const stack = this.stack;
    const scratch = this.scratch;
    stack.push(start);
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (s < 0) {
        // A restore entry: -(slot + 1), followed by the saved value.
        const slot = -s - 1;
        scratch[slot] = stack.pop() as number;
        continue;
      }
      const local = s - this.first;
      if (!list.insert(local, s)) continue;
      switch (kind[s]) {
        case StateKind.Bytes:
        case StateKind.Match:
          list.setSlots(scratch);
          break;
        case StateKind.Look:
          if (lookHolds(arg[s] as number, behind, ahead)) stack.push(next[s] as number);
          break;
        case StateKind.Split: {
          const a = alts[s] as Int32Array;
          for (let j = a.length - 1; j >= 0; j--) stack.push(a[j] as number);
          break;
        }
        default: {
          const slot = arg[s] as number;
          if (slot < scratch.length) {
            stack.push(scratch[slot] as number, -(slot + 1));
            scratch[slot] = pos;
          }
          stack.push(next[s] as number);
        }
      }
    }
  }
}

/** Ordered thread list: NFA states in insertion (priority) order, each with its slots. */
class ThreadList {
  readonly states: Int32Array;
  private readonly sparse: Int32Array;
  private readonly slots: Int32Array;
  size = 0;

  constructor(
    capacity: number,
    private readonly slotCount: number,
  ) {
    this.states = new Int32Array(capacity);
    this.sparse = new Int32Array(capacity);
    this.slots = new Int32Array(capacity * slotCount);
  }

  insert(local: number, state: number): boolean {
    const i = this.sparse[local] as number;
    if (i < this.size && this.states[i] === state) return false;
    this.sparse[local] = this.size;
    this.states[this.size++] = state;
    return true;
  }

  /** Sets the slots of the thread inserted last. */
  setSlots(values: Int32Array): void {
    this.slots.set(values, (this.size - 1) * this.slotCount);
  }

  slotsOf(i: number): Int32Array {
    return this.slots.subarray(i * this.slotCount, (i + 1) * this.slotCount);
  }

  clear(): void {
    this.size = 0;
  }
}

export { END_OF_INPUT };
