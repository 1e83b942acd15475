/**
 * Capture groups of a confirmed match in one forward pass, for rules that are "one-pass" (the
 * idea of regex-automata's one-pass DFA, simplified because the span is already known).
 *
 * A rule is one-pass when, from every point a byte can lead to, at most one consuming NFA state
 * accepts any given byte: the path through a span is then forced, one table lookup per byte,
 * and the only choice left is how it ends at `end` (the first path to the `Match` state, in
 * priority order, whose assertions hold). Most capture rules are like that (`href="([^"]*)"`,
 * `article-(\d+)`, `(shop|blog)\.example`); `(a|ab)c` or `(a*)a` are not, and
 * {@link OnePass.build} refuses them (the bounded backtracker handles those).
 *
 * Contract: as {@link PikeVm.captures}: the slots of the highest-priority path of the rule from
 * `start` that ends exactly at `end`, or undefined when no path does. The returned array is
 * reused by the next call.
 *
 * Why the forced path is the highest-priority one: before `end` there is only one way to
 * consume each byte, so every path to `end` goes through the same consuming states; epsilon
 * paths that reach the same state later are lower priority and would continue identically, so
 * only the first is kept. That last argument fails when the first path depended on an assertion
 * that may not hold at run time: a rule where such a path is shadowed is refused too.
 */
import { behindFacts, lookHolds } from '../nfa/look.js';
import { type Nfa, StateKind } from '../nfa/nfa.js';

/** Rules with more points than this (after counted repetition) are left to the backtracker. */
const MAX_POINTS = 2048;

/** One epsilon path of a closure: where it ends, the assertions it needs, the slots it writes. */
interface Path {
  readonly state: number;
  readonly looks: number;
  readonly slots: readonly number[];
}

export class OnePass {
  /**
   * `[point * stride + class]`: -1 when no path consumes a byte of that class, else
   * `(target point * stride) * 2 + 1 when the edge needs assertions or writes slots`.
   */
  private readonly step: Int32Array;
  /** `[point * stride + class]`: the edge taken on a byte of that class, or -1. */
  private readonly edgeOf: Int32Array;
  /** Per edge: the point reached, the assertions needed, its slots `edgeSlots[from, to)`. */
  private readonly edgeLooks: Int32Array;
  private readonly edgeSlotStart: Int32Array;
  /** Per point: the edge to `Match` (-1: none); same arrays as consuming edges. */
  private readonly matchEdge: Int32Array;
  private readonly slotList: Int32Array;
  private readonly slots: Int32Array;

  private constructor(
    private readonly classes: Uint8Array,
    private readonly stride: number,
    tables: {
      step: Int32Array;
      edgeOf: Int32Array;
      edgeLooks: Int32Array;
      edgeSlotStart: Int32Array;
      matchEdge: Int32Array;
      slotList: Int32Array;
    },
    slotCount: number,
  ) {
    this.step = tables.step;
    this.edgeOf = tables.edgeOf;
    this.edgeLooks = tables.edgeLooks;
    this.edgeSlotStart = tables.edgeSlotStart;
    this.matchEdge = tables.matchEdge;
    this.slotList = tables.slotList;
    this.slots = new Int32Array(slotCount);
  }

  /**
   * The one-pass tables of `rule`, or undefined when the rule is not one-pass (or too large).
   * Bytes are grouped into the rule's own classes, so that a point's row is a few dozen bytes
   * (captures run once per match, usually with cold caches).
   */
  static build(nfa: Nfa, rule: number): OnePass | undefined {
    const { kind, next, arg, members } = nfa;
    const { classes, stride } = ruleClasses(nfa, rule);
    const slotCount = 2 * ((nfa.groupCounts[rule] as number) + 1);
    const points = new Map<number, number>();
    const queue: number[] = [];
    const pointOf = (state: number): number => {
      let p = points.get(state);
      if (p === undefined) {
        p = queue.length;
        points.set(state, p);
        queue.push(state);
      }
      return p;
    };
    pointOf(nfa.ruleStarts[rule] as number);
    const edgeOf: number[] = [];
    const edgeTarget: number[] = [];
    const edgeLooks: number[] = [];
    const edgeSlotStart: number[] = [0];
    const slotList: number[] = [];
    const matchEdge: number[] = [];
    const addEdge = (target: number, path: Path): number => {
      edgeTarget.push(target);
      edgeLooks.push(path.looks);
      for (const s of path.slots) if (s < slotCount) slotList.push(s);
      edgeSlotStart.push(slotList.length);
      return edgeTarget.length - 1;
    };
    // Representative byte of each class, to test byte sets class by class.
    const representative = new Int32Array(stride).fill(-1);
    for (let b = 0; b < 256; b++) {
      const c = classes[b] as number;
      if ((representative[c] as number) < 0) representative[c] = b;
    }
    for (let p = 0; p < queue.length; p++) {
      if (queue.length > MAX_POINTS) return undefined;
      const paths = closure(nfa, queue[p] as number);
      if (paths === undefined) return undefined;
      const row = new Array<number>(stride).fill(-1);
      let match = -1;
      for (const path of paths) {
        if (kind[path.state] === StateKind.Match) {
          if (match < 0) match = addEdge(-1, path);
          continue;
        }
        const set = members[arg[path.state] as number] as Uint8Array;
        let edge = -1;
        for (let c = 0; c < stride; c++) {
          if (set[representative[c] as number] !== 1) continue;
          if ((row[c] as number) >= 0) return undefined; // two ways to consume one byte
          if (edge < 0) edge = addEdge(pointOf(next[path.state] as number), path);
          row[c] = edge;
        }
      }
      edgeOf.push(...row);
      matchEdge.push(match);
    }
    const step = Int32Array.from(edgeOf, (edge) => {
      if (edge < 0) return -1;
      const plain = edgeLooks[edge] === 0 && edgeSlotStart[edge] === edgeSlotStart[edge + 1];
      return (edgeTarget[edge] as number) * stride * 2 + (plain ? 0 : 1);
    });
    return new OnePass(
      classes,
      stride,
      {
        step,
        edgeOf: Int32Array.from(edgeOf),
        edgeLooks: Int32Array.from(edgeLooks),
        edgeSlotStart: Int32Array.from(edgeSlotStart),
        matchEdge: Int32Array.from(matchEdge),
        slotList: Int32Array.from(slotList),
      },
      slotCount,
    );
  }

  /** See the module comment; `prev`/`next` as for {@link PikeVm.captures}. */
  captures(
    bytes: Uint8Array,
    start: number,
    end: number,
    prev: number,
    next: number,
  ): Int32Array | undefined {
    const slots = this.slots;
    for (let k = 0; k < slots.length; k++) slots[k] = -1;
    const { classes, step, edgeOf, edgeLooks, edgeSlotStart, slotList } = this;
    let at = 0; // the current point's offset: point * stride
    for (let pos = start; pos < end; pos++) {
      const b = bytes[pos] as number;
      const index = at + (classes[b] as number);
      const value = step[index] as number;
      if (value < 0) return undefined;
      if ((value & 1) !== 0) {
        const edge = edgeOf[index] as number;
        const looks = edgeLooks[edge] as number;
        const before = pos === start ? prev : (bytes[pos - 1] as number);
        if (looks !== 0 && !allHold(looks, before, b)) return undefined;
        for (let k = edgeSlotStart[edge] as number; k < (edgeSlotStart[edge + 1] as number); k++) {
          slots[slotList[k] as number] = pos;
        }
      }
      at = value >> 1;
    }
    const before = end === start ? prev : (bytes[end - 1] as number);
    const edge = this.matchEdge[at / this.stride] as number;
    if (edge < 0) return undefined;
    const looks = edgeLooks[edge] as number;
    if (looks !== 0 && !allHold(looks, before, next)) return undefined;
    for (let k = edgeSlotStart[edge] as number; k < (edgeSlotStart[edge + 1] as number); k++) {
      slots[slotList[k] as number] = end;
    }
    return slots;
  }
}

/** Byte classes that no byte set of `rule` splits. */
function ruleClasses(nfa: Nfa, rule: number): { classes: Uint8Array; stride: number } {
  const range = nfa.ruleRanges[rule] as { first: number; last: number };
  const boundary = new Uint8Array(257);
  const sets = new Set<number>();
  for (let s = range.first; s <= range.last; s++) {
    if (nfa.kind[s] === StateKind.Bytes) sets.add(nfa.arg[s] as number);
  }
  for (const set of sets) {
    for (const [lo, hi] of (nfa.sets[set] as (typeof nfa.sets)[number]).toRanges()) {
      boundary[lo] = 1;
      boundary[hi + 1] = 1;
    }
  }
  const classes = new Uint8Array(256);
  let c = 0;
  for (let b = 1; b < 256; b++) {
    if (boundary[b] === 1) c++;
    classes[b] = c;
  }
  return { classes, stride: c + 1 };
}

/** Whether every assertion of the bit set `looks` holds between byte `before` and `ahead`. */
function allHold(looks: number, before: number, ahead: number): boolean {
  const behind = behindFacts(before);
  for (let bit = 1; bit <= looks; bit <<= 1) {
    if ((looks & bit) !== 0 && !lookHolds(bit, behind, ahead)) return false;
  }
  return true;
}

/**
 * The epsilon closure of `from` as paths, in priority order, to consuming and `Match` states;
 * undefined when a state is reached again after a first path that needed an assertion (the
 * first path might fail at run time where the later one holds: not one-pass).
 */
function closure(nfa: Nfa, from: number): Path[] | undefined {
  const { kind, next, arg, alts } = nfa;
  const out: Path[] = [];
  const seen = new Map<number, number>(); // state -> looks of the first path that reached it
  const stack: Path[] = [{ state: from, looks: 0, slots: [] }];
  while (stack.length > 0) {
    const path = stack.pop() as Path;
    const s = path.state;
    const earlier = seen.get(s);
    if (earlier !== undefined) {
      if (earlier !== 0) return undefined;
      continue;
    }
    seen.set(s, path.looks);
    switch (kind[s]) {
      case StateKind.Bytes:
      case StateKind.Match:
        out.push(path);
        break;
      case StateKind.Look:
        stack.push({
          state: next[s] as number,
          looks: path.looks | (arg[s] as number),
          slots: path.slots,
        });
        break;
      case StateKind.Split: {
        const a = alts[s] as Int32Array;
        for (let j = a.length - 1; j >= 0; j--) {
          stack.push({ state: a[j] as number, looks: path.looks, slots: path.slots });
        }
        break;
      }
      default: // Capture
        stack.push({
          state: next[s] as number,
          looks: path.looks,
          slots: [...path.slots, arg[s] as number],
        });
    }
  }
  return out;
}
