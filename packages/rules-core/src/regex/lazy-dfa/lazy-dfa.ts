/**
 * A lazy DFA over byte classes that finds leftmost-first (or leftmost-longest) matches of a
 * whole rule set in one forward pass, and knows where every live partial match started.
 *
 * How it works (the ideas of regex-automata's hybrid DFA, plus start tracking):
 * - A DFA state is an ordered list of NFA states. The search is unanchored: every step appends
 *   the closure of the NFA start at the lowest priority (an implicit `(?s:.)*?` prefix). Threads
 *   are therefore ordered by start position, and the list splits into *groups* of threads that
 *   started at the same position: older groups first, then the "fresh" group starting here.
 * - The start position of each older group lives outside the DFA in a register array. A
 *   transition carries a register action (which groups survive, whether the fresh group became
 *   an older one); most transitions need none. This is a tagged DFA with one tag, and it is what
 *   lets a stream know exactly which bytes can still be part of a match.
 * - Leftmost-first: when a `Match` is reached, everything of lower priority (rest of its group,
 *   later groups, future starts) is dropped; a later match seen while stepping can only come
 *   from higher-priority threads, so "the last match seen wins". Leftmost-longest keeps the
 *   whole matching group (longer matches of the same start win, ties go to the earlier rule).
 * - Matches are delayed by one byte: a `Match` (and `$`, `\b`, `\B`, `\z`) is resolved when the
 *   next byte (or the end of input) is known. A state entered on byte `p` reports a match that
 *   ended at `p`. {@link LazyDfa.eoi} resolves the end of input.
 * - States are built on demand and cached. The cache is bounded ({@link DfaOptions.cacheBytes});
 *   when full it is cleared and rebuilding resumes from the current state, so every byte costs
 *   at most one state construction (O(NFA size)): the search stays linear even when the cache
 *   thrashes, just slower.
 *
 * - {@link LazyDfa.skipTables} derives, from the idle start states, which (byte, next byte)
 *   pairs can start a match at all; scanning loops skip every other position with one table
 *   load per byte instead of a DFA step (the literal prefilter, generalised to any rule set).
 *
 * Limits: states built while one stream runs may be evicted before another stream resumes, so a
 * stream keeps its current {@link DfaState} object between calls and re-interns it when the
 * {@link LazyDfa.generation} changed.
 */

import { BEHIND_LOOKS, behindFacts, END_OF_INPUT, lookHolds, relevantBehind } from '../nfa/look.js';
import { type Nfa, StateKind } from '../nfa/nfa.js';
import { Look } from '../syntax/ast.js';
import { isWordByte } from '../syntax/byte-set.js';

export type MatchKind = 'leftmost-first' | 'leftmost-longest';

/** See {@link LazyDfa.skipTables}. */
export interface SkipTables {
  /** `[f * stride * stride + c1 * stride + c2]`: 1 when a match may start at (c1, c2). */
  readonly pairs: Uint8Array;
  /**
   * `[byte | (next byte << 8)]` (the two bytes read as a little-endian 16-bit word): bit `f` is
   * set when, with behind facts `f` before `byte`, a match may start at `byte` (`pairs` by raw
   * bytes, for every facts value in one load).
   */
  readonly pairBits: Uint8Array;
  /** The answer never depends on the facts: every entry of `pairBits` is 0 or 0xff. */
  readonly uniform: boolean;
  /** Every behind-facts value the idle states can have. */
  readonly facts: Int32Array;
}

export interface DfaOptions {
  readonly matchKind?: MatchKind;
  /** Upper bound for the transition tables and state sets, in bytes (default 8 MiB). */
  readonly cacheBytes?: number;
  /**
   * Where the tables a scanning loop reads are allocated (`classes`, `factsAfter`, `trans`,
   * `acts`, `flags`, `ruleOf`, `regOf`, the start offsets and the skip tables' `pairBits`). The
   * substitution engine passes its WebAssembly scan kernel (see `substitution/scan-kernel`),
   * whose loop reads them in place; by default they are plain typed arrays.
   */
  readonly tableSpace?: TableSpace;
}

/** An allocator of zero-filled typed arrays (see {@link DfaOptions.tableSpace}). */
export interface TableSpace {
  /**
   * Called once, first, by the DFA that uses the space: the most bytes it will ever allocate
   * (grown tables are allocated anew and the old ones never freed; each allocation may lose up
   * to 7 bytes to alignment, included).
   */
  reserve(maxBytes: number): void;
  int32(length: number): Int32Array;
  uint8(length: number): Uint8Array;
}

const HEAP_TABLES: TableSpace = {
  reserve: () => {},
  int32: (length) => new Int32Array(length),
  uint8: (length) => new Uint8Array(length),
};

/** Bytes a {@link TableSpace} may lose to aligning each allocation to 8. */
const ALIGNMENT_SLACK = 8 * 128;

/** The content of one DFA state; immutable, shared by every stream using the DFA. */
export interface DfaState {
  readonly key: string;
  /** NFA states (consuming, match, or assertions waiting for the next byte) in priority order. */
  readonly nfaStates: Int32Array;
  /** Exclusive end in `nfaStates` of each group; the last one is the fresh group if unanchored. */
  readonly groupEnds: Int32Array;
  /** Groups that started before the current position (their starts are in the registers). */
  readonly olderGroups: number;
  /** Whether new matches may still start (false once a match cut the lower priorities). */
  readonly unanchored: boolean;
  /** Behind facts at this position (masked to those the NFA uses). */
  readonly behind: number;
  /** Rule of the match that ended just before the byte that led here, or -1. */
  readonly matchRule: number;
  /** Register holding that match's start, or -1 when it started at that same position. */
  readonly matchReg: number;
}

/** State flag: entering the state requires the slow path to record a match. */
export const HAS_MATCH = 1;
/** State flag: no thread is alive and no match can start: the pending match is final. */
export const FINAL = 2;
/** State flag: an unanchored start state (no partial match, nothing pending). */
export const IDLE = 4;

/** Transition codes, the low three bits of a transition (see {@link LazyDfa.trans}). */
export const SLOW = 1;
export const MATCH_ONLY = 2;
export const PUSH_ONLY = 3;
/** A plain transition into an idle start state (see {@link LazyDfa.skipTables}). */
export const TO_IDLE = 4;
/**
 * Into a {@link FINAL} state that reports a match, with no register action: the match ending
 * at this byte is settled here (rule and start register: {@link LazyDfa.ruleOf}, `regOf`).
 */
export const FINAL_MATCH = 5;
/** Into a {@link FINAL} state without a match of its own: the last match seen is settled. */
export const FINAL_ONLY = 6;
/** {@link PUSH_ONLY} into register 0: the new group is the only live one (no `acts` load). */
export const PUSH_FIRST = 7;
/** A transition not built yet; its low bits read as SLOW. */
export const UNBUILT = -7;

/** Transition action codes (see {@link LazyDfa.actions}). */
export const ACTION_NONE = 0;
/** The fresh group survived and becomes register `olderGroups - 1` with start p. */
export const ACTION_PUSH = 1;

export class LazyDfa {
  readonly matchKind: MatchKind;
  /** Byte to byte class. */
  readonly classes: Uint8Array;
  /** Number of byte classes: the row width of the transition tables. */
  readonly stride: number;
  /** A representative byte of each class. */
  private readonly representatives: Uint8Array;
  private readonly behindMask: number;
  private readonly maxStates: number;
  /** `[byte]`: the (masked) behind facts after that byte, to pick a start state in a loop. */
  readonly factsAfter: Uint8Array;

  /**
   * `trans[stateOffset + class]`: {@link UNBUILT} when not built yet, else
   * `targetOffset * 8 + code`, where code 0 is a plain transition, {@link SLOW} needs the slow
   * path (general register action, or push and match together), {@link MATCH_ONLY} only
   * reports a match (registers do not move, so a scanning loop may just remember the last one),
   * {@link PUSH_ONLY} only starts a new group (its `acts` entry is the register to set to the
   * current position; {@link PUSH_FIRST} when that register is 0), {@link TO_IDLE} is a plain transition into an idle start state, and
   * {@link FINAL_MATCH} / {@link FINAL_ONLY} enter a final state (no thread left: the pending
   * match is settled). A state offset is `id * stride`.
   */
  trans: Int32Array;
  /**
   * Register action of each transition: ACTION_NONE, ACTION_PUSH, or an index into actions;
   * for PUSH_ONLY transitions, the register to set instead.
   */
  acts: Int32Array;
  flags: Uint8Array;
  /** Per state id: matchRule, matchReg and olderGroups of the state (see DfaState). */
  ruleOf: Int32Array;
  regOf: Int32Array;
  olderOf: Int32Array;
  behindOf: Int32Array;
  private states: DfaState[] = [];
  private readonly byKey = new Map<string, number>();
  private startOffsets: Int32Array;
  /** Start states by behind facts: their content never changes, so they survive cache clears. */
  private readonly startStates = new Map<number, DfaState>();
  private skip: SkipTables | undefined | null = null;
  private eoiRule: Int32Array;
  private eoiReg: Int32Array;
  /** General register actions: for each new register, the old register it copies or -1 (p). */
  actions: Int32Array[] = [new Int32Array(0), new Int32Array(0)];
  private readonly actionIds = new Map<string, number>();
  /** Bumped each time the cache is cleared: state offsets of older generations are invalid. */
  generation = 0;
  /** The most older groups of any state built so far: registers a stream may need. */
  maxOlderGroups = 0;
  /** Number of cache clears so far (for statistics and tests). */
  clears = 0;
  /** The register action of the transition {@link build} returned last. */
  lastAction = ACTION_NONE;

  private readonly resolved: SparseSet;
  private readonly stepped: SparseSet;
  private readonly stack: number[] = [];
  private readonly space: TableSpace;

  constructor(
    readonly nfa: Nfa,
    options: DfaOptions = {},
  ) {
    this.matchKind = options.matchKind ?? 'leftmost-first';
    const { classes, representatives } = byteClasses(nfa);
    this.representatives = representatives;
    this.stride = representatives.length;
    this.behindMask = relevantBehind(nfa.looks);
    const cacheBytes = options.cacheBytes ?? 8 * 1024 * 1024;
    this.maxStates = Math.max(16, Math.floor(cacheBytes / (this.stride * 8 + 64 + nfa.stateCount)));
    const initial = Math.min(this.maxStates, 64);
    // Growing doubles the tables up to maxStates: all sizes together stay below 2 * maxStates + initial.
    const perState = this.stride * 8 + 9;
    this.space = options.tableSpace ?? HEAP_TABLES;
    this.space.reserve((2 * this.maxStates + initial) * perState + 66_000 + ALIGNMENT_SLACK);
    this.classes = this.space.uint8(256);
    this.classes.set(classes);
    this.factsAfter = this.space.uint8(256);
    for (let b = 0; b < 256; b++) this.factsAfter[b] = behindFacts(b) & this.behindMask;
    this.resolved = new SparseSet(nfa.stateCount);
    this.stepped = new SparseSet(nfa.stateCount);
    this.trans = this.space.int32(initial * this.stride).fill(UNBUILT);
    this.acts = this.space.int32(initial * this.stride);
    this.flags = this.space.uint8(initial);
    this.ruleOf = this.space.int32(initial);
    this.regOf = this.space.int32(initial);
    this.olderOf = new Int32Array(initial);
    this.behindOf = new Int32Array(initial);
    this.eoiRule = new Int32Array(initial).fill(-2);
    this.eoiReg = new Int32Array(initial);
    this.startOffsets = this.space.int32(8).fill(-1);
  }

  /** Number of states currently cached. */
  get stateCount(): number {
    return this.states.length;
  }

  /** The unanchored start state at a position whose previous byte is `prev` (-1: body start). */
  start(prev: number): number {
    return this.startFor(behindFacts(prev) & this.behindMask);
  }

  /** The unanchored start state for (masked) behind facts. */
  startFor(behind: number): number {
    const cached = this.startOffsets[behind] as number;
    if (cached >= 0) return cached;
    const offset = this.intern(this.startState(behind));
    this.startOffsets[behind] = offset;
    return offset;
  }

  /**
   * Start offsets by behind facts (-1: not built in this cache generation). Scanning loops read
   * it to jump between idle states without calling into the DFA.
   */
  get startOffsetTable(): Int32Array {
    return this.startOffsets;
  }

  private startState(behind: number): DfaState {
    let state = this.startStates.get(behind);
    if (state === undefined) {
      this.stepped.clear();
      const out: number[] = [];
      this.stepClosure(0, behind, out);
      state = makeState(out, [out.length], true, behind, -1, -1, 0);
      this.startStates.set(behind, state);
    }
    return state;
  }

  private isIdle(state: DfaState): boolean {
    if (state.olderGroups !== 0 || !state.unanchored || state.matchRule >= 0) return false;
    return this.startState(state.behind).key === state.key;
  }

  /**
   * Tables to skip, from an idle state, every position where no match can start (the
   * prefilter that makes "few matches" fast): `pairs[f * stride * stride + c1 * stride + c2]` is
   * 0 when, from the idle state with behind facts `f`, a match cannot start at a byte of class
   * `c1` followed by one of class `c2` (the partial match it starts dies at the second byte
   * without matching); `pairBits` is the same by raw bytes, with one bit per facts value. Skipping
   * is sound because groups evolve independently: dropping a group that never matches changes
   * nothing else. Undefined when the tables would be too large or the cache cleared while they
   * were computed.
   */
  skipTables(): SkipTables | undefined {
    if (this.skip !== null) return this.skip;
    this.skip = undefined;
    const stride = this.stride;
    if (stride > 96) return undefined;
    const facts = new Set<number>(this.factsAfter);
    facts.add(behindFacts(-1) & this.behindMask);
    const pairs = new Uint8Array(8 * stride * stride).fill(1);
    const generation = this.generation;
    for (const f of facts) {
      this.fillPairs(f, pairs.subarray(f * stride * stride, (f + 1) * stride * stride));
      if (this.generation !== generation) return undefined;
    }
    for (const f of facts) this.startFor(f);
    if (this.generation !== generation) return undefined;
    const factList = Int32Array.from(facts);
    const square = stride * stride;
    const first = (factList[0] as number) * square;
    // When every idle state answers alike (no rule starts with an assertion), an entry is 0 or
    // 0xff and a scanning loop need not know the facts at all.
    const uniform = [...factList].every((f) =>
      pairs.subarray(f * square, (f + 1) * square).every((v, k) => v === pairs[first + k]),
    );
    const pairBits = this.space.uint8(65536);
    for (let b = 0; b < 256; b++) {
      const c1 = this.classes[b] as number;
      for (let n = 0; n < 256; n++) {
        const c2 = this.classes[n] as number;
        let bits = 0;
        for (let f = 0; f < 8; f++) {
          // Facts values no idle state has are never asked for; uniform tables answer for all.
          const from = uniform ? first : f * square;
          if ((uniform || facts.has(f)) && pairs[from + c1 * stride + c2] !== 0) bits |= 1 << f;
        }
        pairBits[b | (n << 8)] = bits;
      }
    }
    this.skip = { pairs, pairBits, uniform, facts: factList };
    return this.skip;
  }

  private fillPairs(behind: number, pairs: Uint8Array): void {
    const stride = this.stride;
    const generation = this.generation;
    const idle = this.startFor(behind);
    for (let c1 = 0; c1 < stride; c1++) {
      const x = this.transition(idle, c1) >> 3;
      // A cache clear invalidates the offsets in hand: the caller then gives up skipping.
      if (this.generation !== generation) return;
      const xi = (x / stride) | 0;
      const emptyHere = (this.flags[xi] as number) & HAS_MATCH && this.regOf[xi] === -1;
      if (emptyHere) continue; // row stays 1: an empty match at this position
      if ((this.olderOf[xi] as number) === 0) {
        pairs.fill(0, c1 * stride, (c1 + 1) * stride);
        continue;
      }
      for (let c2 = 0; c2 < stride; c2++) {
        const t = this.transition(x, c2);
        if (this.generation !== generation) return;
        const y = ((t >> 3) / stride) | 0;
        const action = this.actionAt(x, c2);
        let survives: boolean;
        if (action === ACTION_NONE) survives = (this.olderOf[y] as number) >= 1;
        else if (action === ACTION_PUSH) survives = (this.olderOf[y] as number) >= 2;
        else survives = (this.actions[action] as Int32Array)[0] === 0;
        const matched = ((this.flags[y] as number) & HAS_MATCH) !== 0 && this.regOf[y] === 0;
        pairs[c1 * stride + c2] = survives || matched ? 1 : 0;
      }
    }
  }

  /** The (built) transition value from `offset` on `cls`. */
  private transition(offset: number, cls: number): number {
    const t = this.trans[offset + cls] as number;
    return t === UNBUILT ? this.build(offset, cls) : t;
  }

  /** The state object at `offset`, to keep across calls (see the class comment). */
  stateAt(offset: number): DfaState {
    return this.states[offset / this.stride] as DfaState;
  }

  /** The offset of `state` in the current cache generation, building it if needed. */
  intern(state: DfaState): number {
    const known = this.byKey.get(state.key);
    if (known !== undefined) return known * this.stride;
    if (this.states.length >= this.maxStates) this.clear();
    const id = this.states.length;
    this.ensureCapacity(id + 1);
    this.states.push(state);
    this.byKey.set(state.key, id);
    let flags = 0;
    if (state.matchRule >= 0) flags |= HAS_MATCH;
    if (state.groupEnds.length === 0) flags |= FINAL;
    if (this.isIdle(state)) flags |= IDLE;
    this.flags[id] = flags;
    this.ruleOf[id] = state.matchRule;
    this.regOf[id] = state.matchReg;
    this.olderOf[id] = state.olderGroups;
    if (state.olderGroups > this.maxOlderGroups) this.maxOlderGroups = state.olderGroups;
    this.behindOf[id] = state.behind;
    this.eoiRule[id] = -2;
    return id * this.stride;
  }

  /** Rule whose match a state entered from offset reports, or -1. */
  matchRuleAt(offset: number): number {
    return this.ruleOf[(offset / this.stride) | 0] as number;
  }

  matchRegAt(offset: number): number {
    return this.regOf[(offset / this.stride) | 0] as number;
  }

  olderGroupsAt(offset: number): number {
    return this.olderOf[(offset / this.stride) | 0] as number;
  }

  /**
   * Builds the transition of the state at `offset` on byte class `cls` and returns its encoded
   * value (as stored in {@link trans}). The cache may be cleared meanwhile: callers must re-read
   * `trans`, `acts` and `flags` afterwards and must not reuse other offsets they held.
   */
  build(offset: number, cls: number): number {
    const source = this.states[offset / this.stride] as DfaState;
    const { state, action } = this.computeTransition(source, this.representatives[cls] as number);
    const generation = this.generation;
    let target = this.intern(state);
    let from = offset;
    if (this.generation !== generation) {
      from = this.intern(source);
      target = this.intern(state);
    }
    const flags = this.flags[target / this.stride] as number;
    const older = this.olderOf[target / this.stride] as number;
    let code = 0;
    if (action !== ACTION_NONE && action !== ACTION_PUSH) code = SLOW;
    else if ((flags & FINAL) !== 0) {
      // A final state has no group, so no register can move: only the match matters.
      if (action !== ACTION_NONE) code = SLOW;
      else code = (flags & HAS_MATCH) !== 0 ? FINAL_MATCH : FINAL_ONLY;
    } else if (action === ACTION_PUSH) {
      if ((flags & HAS_MATCH) !== 0) code = SLOW;
      else code = older === 1 ? PUSH_FIRST : PUSH_ONLY;
    } else if ((flags & HAS_MATCH) !== 0) code = MATCH_ONLY;
    else if ((flags & IDLE) !== 0) code = TO_IDLE;
    const value = target * 8 + code;
    this.trans[from + cls] = value;
    // For a push-only transition the scanning loop needs the register to write, not the code.
    this.acts[from + cls] = code === PUSH_ONLY || code === PUSH_FIRST ? older - 1 : action;
    this.lastAction = action;
    return value;
  }

  /** The register action of the built transition from `offset` on `cls`. */
  actionAt(offset: number, cls: number): number {
    const t = this.trans[offset + cls] as number;
    if ((t & 7) === PUSH_ONLY || (t & 7) === PUSH_FIRST) return ACTION_PUSH;
    return this.acts[offset + cls] as number;
  }

  /**
   * Resolves the end of input at the state `offset`: the rule and start register of a match
   * ending there (rule -1 when none).
   */
  eoi(offset: number): { readonly rule: number; readonly reg: number } {
    const id = offset / this.stride;
    if ((this.eoiRule[id] as number) === -2) {
      const { state } = this.computeTransition(this.states[id] as DfaState, END_OF_INPUT);
      this.eoiRule[id] = state.matchRule;
      this.eoiReg[id] = state.matchReg;
    }
    return { rule: this.eoiRule[id] as number, reg: this.eoiReg[id] as number };
  }

  private clear(): void {
    this.states = [];
    this.byKey.clear();
    this.trans.fill(UNBUILT);
    this.startOffsets.fill(-1);
    this.generation++;
    this.clears++;
  }

  private ensureCapacity(states: number): void {
    if (states <= this.flags.length) return;
    const size = Math.min(this.maxStates, Math.max(states, this.flags.length * 2));
    const trans = this.space.int32(size * this.stride).fill(UNBUILT);
    trans.set(this.trans);
    this.trans = trans;
    const acts = this.space.int32(size * this.stride);
    acts.set(this.acts);
    this.acts = acts;
    const flags = this.space.uint8(size);
    flags.set(this.flags);
    this.flags = flags;
    this.ruleOf = grow(this.ruleOf, size, this.space);
    this.regOf = grow(this.regOf, size, this.space);
    this.olderOf = grow(this.olderOf, size);
    this.behindOf = grow(this.behindOf, size);
    const eoiRule = new Int32Array(size).fill(-2);
    eoiRule.set(this.eoiRule);
    this.eoiRule = eoiRule;
    const eoiReg = new Int32Array(size);
    eoiReg.set(this.eoiReg);
    this.eoiReg = eoiReg;
  }

  /**
   * The successor of `source` on `byte` (END_OF_INPUT: only the match resolution matters).
   * First resolves the pending assertions and matches of `source` now that the next byte is
   * known, then steps every consuming NFA state over the byte, group by group, in priority order.
   */
  private computeTransition(source: DfaState, byte: number): { state: DfaState; action: number } {
    const { kind, next, arg, alts, members } = this.nfa;
    const longest = this.matchKind === 'leftmost-longest';
    const nextBehind = byte === END_OF_INPUT ? 0 : behindFacts(byte) & this.behindMask;
    const stack = this.stack;
    this.resolved.clear();
    this.stepped.clear();
    const out: number[] = [];
    const ends: number[] = [];
    const origins: number[] = [];
    let matchRule = -1;
    let matchGroup = -1;
    let stop = false;
    const groups = source.groupEnds.length;
    let from = 0;
    for (let g = 0; g < groups && !stop; g++) {
      const to = source.groupEnds[g] as number;
      const before = out.length;
      let cut = false;
      for (let i = from; i < to && !cut; i++) {
        stack.push(source.nfaStates[i] as number);
        while (stack.length > 0) {
          const s = stack.pop() as number;
          if (!this.resolved.insert(s)) continue;
          switch (kind[s]) {
            case StateKind.Bytes:
              if (byte !== END_OF_INPUT && (members[arg[s] as number] as Uint8Array)[byte] === 1) {
                this.stepClosure(next[s] as number, nextBehind, out);
              }
              break;
            case StateKind.Match:
              if (matchRule < 0 || (longest && (arg[s] as number) < matchRule)) {
                matchRule = arg[s] as number;
              }
              matchGroup = g;
              stop = true;
              if (!longest) {
                cut = true;
                stack.length = 0;
              }
              break;
            case StateKind.Look:
              if (lookHolds(arg[s] as number, source.behind, byte)) stack.push(next[s] as number);
              break;
            case StateKind.Split: {
              const a = alts[s] as Int32Array;
              for (let j = a.length - 1; j >= 0; j--) stack.push(a[j] as number);
              break;
            }
            default: // Capture
              stack.push(next[s] as number);
          }
        }
      }
      from = to;
      if (out.length > before) {
        origins.push(g);
        ends.push(out.length);
      }
    }
    const olderBefore = source.olderGroups;
    const unanchored = source.unanchored && !stop && byte !== END_OF_INPUT;
    if (unanchored) {
      this.stepClosure(0, nextBehind, out);
      ends.push(out.length);
    }
    const matchReg = matchGroup < 0 || matchGroup >= olderBefore ? -1 : matchGroup;
    const state = makeState(out, ends, unanchored, nextBehind, matchRule, matchReg, origins.length);
    return { state, action: this.actionFor(origins, olderBefore) };
  }

  /** Adds the closure of `start` (assertions needing the next byte stay pending) to `out`. */
  private stepClosure(start: number, behind: number, out: number[]): void {
    const { kind, next, arg, alts } = this.nfa;
    const stack = this.stack;
    const base = stack.length;
    stack.push(start);
    while (stack.length > base) {
      const s = stack.pop() as number;
      if (!this.stepped.insert(s)) continue;
      switch (kind[s]) {
        case StateKind.Bytes:
        case StateKind.Match:
          out.push(s);
          break;
        case StateKind.Look: {
          const look = arg[s] as number;
          if ((look & BEHIND_LOOKS) === 0) out.push(s);
          else if (lookHolds(look, behind, END_OF_INPUT)) stack.push(next[s] as number);
          break;
        }
        case StateKind.Split: {
          const a = alts[s] as Int32Array;
          for (let j = a.length - 1; j >= 0; j--) stack.push(a[j] as number);
          break;
        }
        default:
          stack.push(next[s] as number);
      }
    }
  }

  /** Encodes the register action: origins[i] is the source group of new register i. */
  private actionFor(origins: readonly number[], olderBefore: number): number {
    let prefix = 0;
    while (prefix < origins.length && prefix < olderBefore && origins[prefix] === prefix) prefix++;
    if (prefix === origins.length) return ACTION_NONE;
    if (prefix === origins.length - 1 && origins[prefix] === olderBefore) return ACTION_PUSH;
    const copy = Int32Array.from(origins, (o) => (o >= olderBefore ? -1 : o));
    const key = copy.join(',');
    let id = this.actionIds.get(key);
    if (id === undefined) {
      id = this.actions.length;
      this.actions.push(copy);
      this.actionIds.set(key, id);
    }
    return id;
  }
}

function grow(array: Int32Array, size: number, space = HEAP_TABLES): Int32Array {
  const out = space.int32(size);
  out.set(array);
  return out;
}

function makeState(
  nfaStates: readonly number[],
  groupEnds: readonly number[],
  unanchored: boolean,
  behind: number,
  matchRule: number,
  matchReg: number,
  olderGroups = 0,
): DfaState {
  let key = `${behind}|${unanchored ? 1 : 0}|${matchRule}|${matchReg}|`;
  let g = 0;
  for (let i = 0; i < nfaStates.length; i++) {
    while (groupEnds[g] === i) {
      key += ';';
      g++;
    }
    key += `${nfaStates[i]},`;
  }
  key += `#${groupEnds.length}`;
  return {
    key,
    nfaStates: Int32Array.from(nfaStates),
    groupEnds: Int32Array.from(groupEnds),
    olderGroups,
    unanchored,
    behind,
    matchRule,
    matchReg,
  };
}

/**
 * Partitions the 256 bytes into classes that no byte set (and no assertion) distinguishes, so
 * that transition rows have one entry per class instead of per byte.
 */
export function byteClasses(nfa: Nfa): { classes: Uint8Array; representatives: Uint8Array } {
  const boundary = new Uint8Array(257);
  const mark = (lo: number, hi: number) => {
    boundary[lo] = 1;
    boundary[hi + 1] = 1;
  };
  for (const set of nfa.sets) for (const [lo, hi] of set.toRanges()) mark(lo, hi);
  if (nfa.looks & (Look.LineStart | Look.LineEnd)) mark(0x0a, 0x0a);
  if (nfa.looks & (Look.WordBoundary | Look.NotWordBoundary)) {
    for (let b = 0; b < 256; b++) if (isWordByte(b) !== isWordByte(b - 1)) boundary[b] = 1;
  }
  const classes = new Uint8Array(256);
  const representatives: number[] = [0];
  let cls = 0;
  for (let b = 1; b < 256; b++) {
    if (boundary[b] === 1) {
      cls++;
      representatives.push(b);
    }
    classes[b] = cls;
  }
  return { classes, representatives: Uint8Array.from(representatives) };
}

/** A set of small integers with O(1) insert, membership and clear (Briggs & Torczon). */
class SparseSet {
  private readonly dense: Int32Array;
  private readonly sparse: Int32Array;
  private size = 0;

  constructor(capacity: number) {
    this.dense = new Int32Array(capacity);
    this.sparse = new Int32Array(capacity);
  }

  /** Adds `value`; false when it was already present. */
  insert(value: number): boolean {
    const i = this.sparse[value] as number;
    if (i < this.size && this.dense[i] === value) return false;
    this.dense[this.size] = value;
    this.sparse[value] = this.size++;
    return true;
  }

  clear(): void {
    this.size = 0;
  }
}
