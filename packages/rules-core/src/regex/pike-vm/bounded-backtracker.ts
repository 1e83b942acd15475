/**
 * Capture groups of a confirmed match by bounded backtracking (RE2's "BitState"): a depth-first
 * search over the rule's NFA in priority order that never visits the same (state, position)
 * twice, so it is linear in span x states like the Pike VM and returns the same slots (the first
 * path to reach a state at a position is the highest-priority one, exactly what the Pike VM's
 * thread lists keep), but allocates nothing per step. It is the default for short spans; the
 * {@link PikeVm} takes over when the visited table would be too large.
 *
 * Contract: as {@link PikeVm.captures}: slots of the highest-priority path of `rule` from `start`
 * that ends exactly at `end`, or undefined. The returned array is reused by the next call.
 */
import { behindFacts, lookHolds } from '../nfa/look.js';
import { type Nfa, StateKind } from '../nfa/nfa.js';

/** Largest visited table (states x positions) the backtracker uses; beyond, use the Pike VM. */
export const MAX_VISITED = 1 << 22;

/** Stack frame kinds: explore (state, pos), or restore a slot to its saved value. */
const EXPLORE = 0;
const RESTORE = 1;

export class BoundedBacktracker {
  private readonly first: number;
  private readonly states: number;
  private readonly slots: Int32Array;
  private visited = new Int32Array(0);
  private stamp = 0;
  /** Frames of three ints: kind, a, b (kept between calls to avoid reallocating). */
  private stack: Int32Array = new Int32Array(3 * 64);

  constructor(
    private readonly nfa: Nfa,
    private readonly rule: number,
    range: { readonly first: number; readonly last: number },
  ) {
    this.first = range.first;
    this.states = range.last - range.first + 1;
    this.slots = new Int32Array(2 * ((nfa.groupCounts[rule] as number) + 1));
  }

  /** Whether a span of `length` bytes fits the visited table bound. */
  fits(length: number): boolean {
    return this.states * (length + 1) <= MAX_VISITED;
  }

  captures(
    bytes: Uint8Array,
    start: number,
    end: number,
    prev: number,
    next: number,
  ): Int32Array | undefined {
    const width = end - start + 1;
    const size = this.states * width;
    if (this.visited.length < size) this.visited = new Int32Array(Math.max(size, 1024));
    if (++this.stamp === 0x7fffffff) {
      this.visited.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const visited = this.visited;
    const { kind, next: nextState, arg, alts, members } = this.nfa;
    const slots = this.slots;
    const first = this.first;
    slots.fill(-1);
    // The explicit stack lives in locals (hot); `grow` doubles it when full.
    let stack: Int32Array = this.stack;
    let sp = 0;
    stack[sp++] = EXPLORE;
    stack[sp++] = this.nfa.ruleStarts[this.rule] as number;
    stack[sp++] = start;
    while (sp > 0) {
      sp -= 3;
      const frame = stack[sp] as number;
      const a = stack[sp + 1] as number;
      let pos = stack[sp + 2] as number;
      if (frame === RESTORE) {
        slots[a] = pos;
        continue;
      }
      let s = a;
      // Follow single-successor states (bytes too) inline; splits push their alternatives.
      for (;;) {
        const mark = (s - first) * width + (pos - start);
        if (visited[mark] === stamp) break;
        visited[mark] = stamp;
        const k = kind[s] as number;
        if (k === StateKind.Match) {
          if (pos === end) return slots;
          break;
        }
        if (k === StateKind.Bytes) {
          if (pos >= end || (members[arg[s] as number] as Uint8Array)[bytes[pos] as number] !== 1) {
            break;
          }
          s = nextState[s] as number;
          pos++;
          continue;
        }
        if (k === StateKind.Split) {
          const choices = alts[s] as Int32Array;
          for (let j = choices.length - 1; j >= 1; j--) {
            if (sp + 3 > stack.length) stack = this.grow();
            stack[sp++] = EXPLORE;
            stack[sp++] = choices[j] as number;
            stack[sp++] = pos;
          }
          s = choices[0] as number;
          continue;
        }
        if (k === StateKind.Look) {
          const behind = behindFacts(pos === start ? prev : (bytes[pos - 1] as number));
          const ahead = pos < end ? (bytes[pos] as number) : next;
          if (!lookHolds(arg[s] as number, behind, ahead)) break;
          s = nextState[s] as number;
          continue;
        }
        // Capture: record, and restore when this path is abandoned.
        const slot = arg[s] as number;
        if (slot < slots.length) {
          if (sp + 3 > stack.length) stack = this.grow();
          stack[sp++] = RESTORE;
          stack[sp++] = slot;
          stack[sp++] = slots[slot] as number;
          slots[slot] = pos;
        }
        s = nextState[s] as number;
      }
    }
    return undefined;
  }

  private grow(): Int32Array {
    const grown = new Int32Array(this.stack.length * 2);
    grown.set(this.stack);
    this.stack = grown;
    return grown;
  }
}
