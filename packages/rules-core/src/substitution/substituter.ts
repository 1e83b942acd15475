/**
 * The streaming substitution engine: applies a compiled rule set to one body, chunk by chunk,
 * in one pass (SUBSTITUTION-SPEC points 7-14).
 *
 * Contract:
 * - `feed(chunk)` returns the output that is already certain; `end()` returns the rest. The
 *   concatenated output does not depend on how the body is chunked.
 * - Bytes are held back only while they belong to a live partial match or to a match that may
 *   still grow: the lazy DFA's registers give the start of every live partial match, so every
 *   byte before the earliest one is emitted by the `feed` call that brought it.
 * - A live partial match longer than `maxBufferedBytes` bytes (default 8192) is given up: the
 *   `warn` callback is called once, what is held is emitted unchanged and the rest of the body
 *   passes through untouched. The check is made at every byte, not at chunk boundaries, so even
 *   this outcome is chunking-independent.
 * - Once every rule is once-only and has fired (including a single once-rule), the rest of the
 *   body passes through without being scanned.
 *
 * Time: each byte costs at most one DFA transition, and idle text (no live partial match) costs
 * one table load per byte (the DFA's pair tables skip positions where no match can start:
 * `LazyDfa.skipTables`, off with `prefilter: false`). After a match, the bytes the DFA looked
 * at beyond its end (at least one, since matches are reported one byte late) are scanned again
 * from the match end, as sregex does. Those bytes are held-back bytes, so the rescanning is
 * bounded by `maxBufferedBytes` per match and is usually a single byte.
 */

import type { DfaState } from '../regex/lazy-dfa/lazy-dfa.js';
import {
  ACTION_NONE,
  ACTION_PUSH,
  FINAL,
  HAS_MATCH,
  type SkipTables,
  UNBUILT,
} from '../regex/lazy-dfa/lazy-dfa.js';
import { END_OF_INPUT } from '../regex/nfa/look.js';
import type { CompiledRuleSet } from './rule-set.js';
import {
  INLINE_CONSTANT,
  INLINE_COPY,
  INLINE_NEVER,
  INLINE_QUEUED,
  INLINE_TEMPLATE,
} from './scan-kernel/scan-kernel.js';

export const DEFAULT_MAX_BUFFERED_BYTES = 8192;

export interface SubstituterOptions {
  /** Longest partial match held back before giving up (SUBSTITUTION-SPEC point 13). */
  readonly maxBufferedBytes?: number;
  /** Where the buffer-limit warning goes (default: `process.emitWarning`). */
  readonly warn?: (message: string) => void;
  /** Skip idle text with the DFA's pair tables (default true; false is for tests and checks). */
  readonly prefilter?: boolean;
  /**
   * Scan with the fast loop (default true). False sends every byte through the general slow
   * path, which checks the buffer limit at each byte: the reference the fast loop (skipping,
   * matches settled in the loop, deadlines) is tested against.
   */
  readonly fastPaths?: boolean;
}

export interface RuleStats {
  readonly index: number;
  readonly pattern: string;
  /** Matches this rule won (including those emitted unchanged by a once-rule that had fired). */
  readonly matches: number;
  /** Matches actually replaced. */
  readonly replacements: number;
}

export interface SubstitutionStats {
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly rules: readonly RuleStats[];
  /** Indices of the rules that matched at least once (what prexy's per-asset bitmap records). */
  readonly matchedRules: readonly number[];
  /** True when the buffer limit was hit and the rest of the body passed through. */
  readonly bufferLimitHit: boolean;
}

const EMPTY = Buffer.alloc(0);

export class Substituter {
  private readonly set: CompiledRuleSet;
  private readonly maxBuffered: number;
  private readonly warn: (message: string) => void;

  /** Bytes `[bufStart, bufEnd)` of the body, in `buf`; `contextByte` is the byte at bufStart-1. */
  private buf: Uint8Array = EMPTY;
  private bufStart = 0;
  private bufEnd = 0;
  private contextByte = -1;
  private window: Buffer = Buffer.alloc(0);
  /** `buf` as a DataView, for the output copies' 32-bit reads (see bufWords). */
  private words: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private wordsOf: Uint8Array | undefined;

  /** Next byte the DFA reads, and first byte not emitted yet. */
  private scanPos = 0;
  private emitPos = 0;
  /** DFA state offset; `saved` keeps the state's content across calls (cache may be cleared). */
  private state: number;
  private saved: DfaState | undefined;
  private generation: number;
  /**
   * Start positions of the live groups of partial matches (see LazyDfa), relative to
   * `bufStart` (moved with it), so that they are small integers like the loop's indices. Kept
   * at least as long as any built state needs: the scanning loop never grows it (that would
   * change its elements kind and deoptimise the loop). Not an array literal: those start with
   * copy-on-write elements, and the loop's first store would deoptimise it too.
   */
  private readonly regs: number[] = Array.from({ length: 4 }, () => 0);
  /** The DFA's idle-state skip tables (undefined: no skipping). */
  private readonly skip: SkipTables | undefined;
  /** Earliest position whose consumption requires the buffer-limit check. */
  private deadline = Infinity;

  /** The best match seen so far, not yet final (rule -1: none). */
  private mRule = -1;
  private mStart = 0;
  private mEnd = 0;

  private passthrough = false;
  private ended = false;
  private readonly fired: Uint8Array;
  /**
   * Per rule, what the scanning loop may do with its matches (the kernel's INLINE_* codes): a
   * `g` rule's are settled there (their constant replacement or template written there, or
   * queued when a group's place needs captures), a once-rule's never until it fired, then they
   * are copied through unchanged.
   */
  private readonly inline: Uint8Array;
  private readonly fastPaths: boolean;
  private onceLeft: number;
  private readonly allOnce: boolean;
  private readonly matchCounts: Int32Array;
  private readonly replaceCounts: Int32Array;
  private bytesIn = 0;
  private bytesOut = 0;
  private limitHit = false;

  /**
   * Pending output: `opCount` ints, pairs `[from, to)` of `buf` offsets or `[-1 - from, to)` of
   * the rule set's literal pool (a literal).
   */
  private ops = new Int32Array(256);
  private opCount = 0;
  private outLength = 0;
  /** Output collected during a call, before its end (see {@link takeOutput}). */
  private readonly spilled: Buffer[] = [];

  constructor(set: CompiledRuleSet, options: SubstituterOptions = {}) {
    this.set = set;
    this.maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    if (!(this.maxBuffered >= 0)) throw new RangeError('maxBufferedBytes must be >= 0');
    this.warn = options.warn ?? ((m) => process.emitWarning(m, 'RampartSubstitutionWarning'));
    const n = set.rules.length;
    this.fired = new Uint8Array(n);
    this.matchCounts = new Int32Array(n);
    this.replaceCounts = new Int32Array(n);
    this.allOnce = set.rules.every((r) => r.once);
    this.onceLeft = n;
    this.passthrough = n === 0;
    this.skip = options.prefilter === false ? undefined : set.dfa.skipTables();
    this.inline = Uint8Array.from(set.rules, (r, k) =>
      r.once
        ? INLINE_NEVER
        : (set.constants[k] as number) >= 0
          ? INLINE_CONSTANT
          : set.kernel.writesTemplate(k)
            ? INLINE_TEMPLATE
            : INLINE_QUEUED,
    );
    this.fastPaths = options.fastPaths !== false;
    this.state = set.dfa.start(-1);
    this.saved = set.dfa.stateAt(this.state);
    this.generation = set.dfa.generation;
  }

  /** Processes the next chunk; returns the output it made certain (possibly empty). */
  feed(chunk: Uint8Array): Buffer {
    if (this.ended) throw new Error('feed() after end()');
    this.bytesIn += chunk.length;
    if (chunk.length === 0) return EMPTY;
    if (this.passthrough) {
      this.bufEnd += chunk.length;
      this.bufStart = this.scanPos = this.emitPos = this.bufEnd;
      this.bytesOut += chunk.length;
      return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    }
    this.resume();
    this.attach(chunk);
    this.scan();
    if (!this.passthrough) this.emitRange(this.emitPos, this.earliestLive());
    else this.emitRange(this.emitPos, this.bufEnd);
    // Collect (copying pieces out of the window) before keepHeld may move the window's bytes.
    const output = this.takeOutput();
    this.keepHeld();
    this.saved = this.set.dfa.stateAt(this.state);
    return output;
  }

  /** Settles the end of the body (`$`, `\z`, `\b`, pending matches); returns the rest. */
  end(): Buffer {
    if (this.ended) return EMPTY;
    this.ended = true;
    if (!this.passthrough) {
      this.resume();
      this.settleEnd();
    }
    this.emitRange(this.emitPos, this.bufEnd);
    const output = this.takeOutput();
    this.buf = EMPTY;
    this.window = Buffer.alloc(0);
    this.wordsOf = undefined;
    this.words = new DataView(new ArrayBuffer(0));
    return output;
  }

  /** Statistics so far (complete after `end()`). */
  get stats(): SubstitutionStats {
    const rules = this.set.rules.map((r) => ({
      index: r.index,
      pattern: r.pattern,
      matches: this.matchCounts[r.index] as number,
      replacements: this.replaceCounts[r.index] as number,
    }));
    return {
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      rules,
      matchedRules: rules.filter((r) => r.matches > 0).map((r) => r.index),
      bufferLimitHit: this.limitHit,
    };
  }

  /** Re-interns the current state if another stream caused a DFA cache clear meanwhile. */
  private resume(): void {
    const dfa = this.set.dfa;
    if (this.generation !== dfa.generation && this.saved !== undefined) {
      this.state = dfa.intern(this.saved);
    }
    this.generation = dfa.generation;
  }

  /** Makes `chunk` readable as bytes `[bufEnd, bufEnd + chunk.length)`. */
  private attach(chunk: Uint8Array): void {
    if (this.emitPos === this.bufEnd) {
      // Nothing held: scan the caller's chunk in place.
      this.contextByte = this.byteBefore(this.bufEnd);
      this.buf = chunk;
      this.moveBufStart(this.bufEnd);
    } else {
      const held = this.bufEnd - this.bufStart;
      const need = held + chunk.length;
      if (this.window.length < need) {
        const grown = Buffer.allocUnsafeSlow(Math.max(need, this.window.length * 2, 4096));
        grown.set(this.buf.subarray(0, held));
        this.window = grown;
      } else if (this.buf !== this.window) {
        this.window.set(this.buf.subarray(0, held));
      }
      this.window.set(chunk, held);
      this.buf = this.window;
    }
    this.bufEnd += chunk.length;
  }

  /** Keeps the held bytes `[emitPos, bufEnd)` (copying them out of the caller's chunk). */
  private keepHeld(): void {
    const held = this.bufEnd - this.emitPos;
    if (held === 0) {
      this.contextByte = this.byteBefore(this.bufEnd);
      this.buf = EMPTY;
      this.moveBufStart(this.bufEnd);
      return;
    }
    const from = this.emitPos - this.bufStart;
    if (this.buf === this.window) {
      // Compact only when the emitted prefix dominates, so copying stays amortised O(1)/byte.
      if (from > 0 && from >= held) {
        this.contextByte = this.byteBefore(this.emitPos);
        this.window.copyWithin(0, from, from + held);
        this.moveBufStart(this.emitPos);
      }
      return;
    }
    this.contextByte = this.byteBefore(this.emitPos);
    if (this.window.length < held) this.window = Buffer.allocUnsafeSlow(Math.max(held * 2, 4096));
    this.window.set(this.buf.subarray(from, from + held), 0);
    this.buf = this.window;
    this.moveBufStart(this.emitPos);
  }

  /** Sets `bufStart`, keeping the registers (relative to it) pointing at the same bytes. */
  private moveBufStart(pos: number): void {
    const delta = pos - this.bufStart;
    if (delta !== 0) {
      const regs = this.regs;
      for (let k = 0; k < regs.length; k++) regs[k] = (regs[k] as number) - delta;
    }
    this.bufStart = pos;
  }

  /** The byte at absolute position `pos - 1`, or -1 at the start of the body. */
  private byteBefore(pos: number): number {
    if (pos === 0) return -1;
    if (pos - 1 >= this.bufStart && pos - 1 < this.bufEnd) {
      return this.buf[pos - 1 - this.bufStart] as number;
    }
    return this.contextByte;
  }

  /**
   * Runs the DFA over every byte received. The per-byte work is the scan kernel's (WebAssembly,
   * `scan-kernel/`): one transition per byte until a transition that needs the slow path
   * ({@link step}), the buffer-limit deadline, or the end of its copied window. Match-only
   * transitions are remembered, push-only ones start a register, idle states skip every
   * position where no match can start, and a transition into a final state settles the pending
   * match in the loop when `inline` allows it (a non-empty match of a rule whose matches need no
   * bookkeeping beyond counting): it goes to the kernel's queue ({@link settleQueued}) and the
   * scan restarts at its end, as {@link finalize} would.
   *
   * Buffer limit: the loop never consumes a byte at which a live partial match could exceed
   * `maxBuffered`; the slow path checks exactly there. Groups live at entry are covered by
   * `deadline` (set by the last exact check); every group started in the loop starts at or
   * after the entry or its last restart, so that plus `maxBuffered` covers those without any
   * work per push. Stopping early costs one slow step per `maxBuffered` bytes at most.
   */
  private scan(): void {
    const dfa = this.set.dfa;
    const kernel = this.set.kernel;
    // The buffer's bytes changed since the last scan (a new chunk, held bytes moved).
    kernel.forgetWindow();
    if (!this.fastPaths) {
      while (this.scanPos < this.bufEnd && !this.passthrough) {
        this.step(this.buf[this.scanPos - this.bufStart] as number);
      }
      return;
    }
    while (this.scanPos < this.bufEnd && !this.passthrough) {
      const base = this.bufStart;
      const outputFrom = kernel.outputAt;
      this.growRegs();
      const i = kernel.run(
        this.buf,
        this.scanPos - base,
        this.bufEnd - base,
        base,
        this.state,
        dfa,
        this.regs,
        this.deadline,
        this.maxBuffered,
        this.skip,
        this.inline,
        this.emitPos - base,
        this.matchCounts,
        this.replaceCounts,
      );
      const out = kernel.out;
      this.deadline = out.deadline;
      if (out.emitPos + base !== this.emitPos) this.settled(outputFrom, base);
      // The output area is copied out before it could run short (see ScanKernel).
      if (kernel.outputFilling) this.spilled.push(this.collect());
      if (out.matchTarget >= 0) this.recordMatch(out.matchTarget, out.matchAt + base);
      this.state = out.state;
      this.scanPos = i + base;
      if (this.scanPos >= this.bufEnd) break;
      this.step(this.buf[i] as number);
    }
  }

  /** `buf` as a DataView, made once per buffer (a chunk is usually scanned in several calls). */
  private bufWords(): DataView<ArrayBufferLike> {
    if (this.wordsOf !== this.buf) {
      this.words = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      this.wordsOf = this.buf;
    }
    return this.words;
  }

  /** Makes `regs` as long as the largest built state needs (by `push`: never holey). */
  private growRegs(): void {
    const regs = this.regs;
    while (regs.length < this.set.dfa.maxOlderGroups) regs.push(0);
  }

  /** Consumes one byte through the slow path: builds, records matches, moves registers. */
  private step(byte: number): void {
    const dfa = this.set.dfa;
    const cls = dfa.classes[byte] as number;
    let t = dfa.trans[this.state + cls] as number;
    let action: number;
    if (t === UNBUILT) {
      t = dfa.build(this.state, cls);
      action = dfa.lastAction;
      this.generation = dfa.generation;
    } else {
      action = dfa.actionAt(this.state, cls);
    }
    const target = t >> 3;
    const p = this.scanPos;
    this.growRegs();
    const flags = dfa.flags[(target / dfa.stride) | 0] as number;
    if ((flags & HAS_MATCH) !== 0) this.recordMatch(target, p);
    if (action === ACTION_PUSH) {
      this.regs[dfa.olderGroupsAt(target) - 1] = p - this.bufStart;
    } else if (action !== ACTION_NONE) {
      const origins = dfa.actions[action] as Int32Array;
      for (let i = 0; i < origins.length; i++) {
        const o = origins[i] as number;
        this.regs[i] = o >= 0 ? (this.regs[o] as number) : p - this.bufStart;
      }
    }
    this.state = target;
    this.scanPos = p + 1;
    if ((flags & FINAL) !== 0) this.finalize();
    this.checkLimit();
  }

  /**
   * Takes in what the scan kernel settled in its last call: the output it appended from
   * `outputFrom` (bytes before matches, their replacements), with the replacements of the
   * matches it queued (templates with groups) in their places. They supersede any match pending
   * before the loop ran.
   */
  private settled(outputFrom: number, base: number): void {
    const kernel = this.set.kernel;
    const queue = kernel.queue;
    let from = outputFrom;
    for (let k = 0; k < kernel.out.queued; k += 4) {
      const to = queue[k + 3] as number;
      this.pushPool(from, to);
      this.emitReplacement(
        queue[k] as number,
        (queue[k + 1] as number) + base,
        (queue[k + 2] as number) + base,
      );
      from = to;
    }
    this.pushPool(from, kernel.outputAt);
    this.emitPos = kernel.out.emitPos + base;
    this.mRule = -1;
  }

  /** The state at `target`, entered on the byte at `p`, reports a match ending at `p`. */
  private recordMatch(target: number, p: number): void {
    const dfa = this.set.dfa;
    const reg = dfa.matchRegAt(target);
    this.mRule = dfa.matchRuleAt(target);
    this.mStart = reg >= 0 ? (this.regs[reg] as number) + this.bufStart : p;
    this.mEnd = p;
  }

  /** Earliest byte that may still belong to a match (bufEnd when none). */
  private earliestLive(): number {
    let earliest = this.scanPos;
    if (this.mRule >= 0) earliest = Math.min(earliest, this.mStart);
    if (this.set.dfa.olderGroupsAt(this.state) > 0) {
      earliest = Math.min(earliest, (this.regs[0] as number) + this.bufStart);
    }
    return earliest;
  }

  /** Applies the buffer limit, and sets the next position at which to check it again. */
  private checkLimit(): void {
    if (this.passthrough) return;
    const earliest = this.earliestLive();
    if (this.scanPos - earliest > this.maxBuffered) {
      this.limitHit = true;
      this.warn(
        `substitution: a partial match exceeded maxBufferedBytes (${this.maxBuffered}) at byte ` +
          `${this.scanPos}; the rest of this body passes through unchanged`,
      );
      this.emitRange(this.emitPos, this.bufEnd);
      this.emitPos = this.scanPos = this.bufEnd;
      this.mRule = -1;
      this.passthrough = true;
      return;
    }
    this.deadline = earliest === this.scanPos ? Infinity : earliest + this.maxBuffered;
  }

  /** The pending match is final: emit up to it, emit it (replaced or not), restart after it. */
  private finalize(): boolean {
    const rule = this.mRule;
    if (rule < 0) {
      // Unreachable: a state without threads is only entered after a match cut the others.
      throw new Error('internal error: final DFA state without a pending match');
    }
    const start = this.mStart;
    const end = this.mEnd;
    this.mRule = -1;
    this.emitRange(this.emitPos, start);
    this.matchCounts[rule] = (this.matchCounts[rule] as number) + 1;
    const compiled = this.set.rules[rule];
    if (compiled === undefined) throw new Error(`internal error: no rule ${rule}`);
    if (compiled.once && this.fired[rule] === 1) {
      this.emitRange(start, end);
    } else {
      this.emitReplacement(rule, start, end);
      this.replaceCounts[rule] = (this.replaceCounts[rule] as number) + 1;
      if (compiled.once) {
        this.fired[rule] = 1;
        this.onceLeft--;
        // From now on its matches are only copied through: the loop may settle them.
        this.inline[rule] = INLINE_COPY;
      }
    }
    this.emitPos = end;
    if (this.allOnce && this.onceLeft === 0) {
      this.emitRange(this.emitPos, this.bufEnd);
      this.emitPos = this.scanPos = this.bufEnd;
      this.passthrough = true;
      return false;
    }
    let restart = end;
    if (start === end) {
      // An empty match: the byte after it is copied through and the search resumes after it.
      if (end >= this.bufEnd) {
        this.scanPos = this.bufEnd;
        return false;
      }
      this.emitRange(end, end + 1);
      this.emitPos = restart = end + 1;
    }
    this.restartAt(restart);
    return true;
  }

  private restartAt(pos: number): void {
    const dfa = this.set.dfa;
    this.state = dfa.start(this.byteBefore(pos));
    this.generation = dfa.generation;
    this.scanPos = pos;
    this.deadline = Infinity;
  }

  /** At the end of the body: resolve the end-of-input assertions and settle every match. */
  private settleEnd(): void {
    const dfa = this.set.dfa;
    for (;;) {
      if (this.passthrough) return;
      if (this.scanPos < this.bufEnd) {
        this.scan();
        continue;
      }
      const eoi = dfa.eoi(this.state);
      if (eoi.rule >= 0) {
        this.mRule = eoi.rule;
        this.mStart = eoi.reg >= 0 ? (this.regs[eoi.reg] as number) + this.bufStart : this.scanPos;
        this.mEnd = this.scanPos;
      }
      if (this.mRule < 0) return;
      if (!this.finalize()) return;
    }
  }

  private emitReplacement(rule: number, start: number, end: number): void {
    const compiled = this.set.rules[rule];
    if (compiled === undefined) return;
    const program = this.set.programs[rule] as Int32Array;
    let slots: Int32Array | undefined;
    if (compiled.template.usesGroups) {
      const next = end < this.bufEnd ? (this.buf[end - this.bufStart] as number) : END_OF_INPUT;
      const from = start - this.bufStart;
      const to = end - this.bufStart;
      slots = this.set.captures(rule, this.buf, from, to, this.byteBefore(start), next);
    }
    for (let k = 0; k < program.length; k++) {
      const op = program[k] as number;
      if (op >= 0) this.push(op);
      else if (op === -1) this.emitCopy(start, end);
      else if (slots !== undefined && 2 * (-1 - op) + 1 < slots.length) {
        const group = -1 - op;
        const from = slots[2 * group] as number;
        const to = slots[2 * group + 1] as number;
        if (from >= 0 && to >= from) this.emitCopy(from + this.bufStart, to + this.bufStart);
      }
    }
  }

  /** Emits body bytes `[from, to)` (absolute positions) as part of a replacement. */
  private emitCopy(from: number, to: number): void {
    if (to > from) this.pushRange(from - this.bufStart, to - this.bufStart);
  }

  /** Emits body bytes `[from, to)` unchanged and advances `emitPos`. */
  private emitRange(from: number, to: number): void {
    if (to > from) this.pushRange(from - this.bufStart, to - this.bufStart);
    if (to > this.emitPos) this.emitPos = to;
  }

  /**
   * Output is recorded as ranges of `buf` (merged when adjacent) and literal buffers, and copied
   * once per call by {@link collect}: no per-piece allocation on the hot path.
   */
  private pushRange(from: number, to: number): void {
    const n = this.opCount;
    const ops = this.ops;
    if (n > 0 && ops[n - 1] === from && (ops[n - 2] as number) >= 0) {
      ops[n - 1] = to;
    } else {
      if (n + 2 > ops.length) this.growOps();
      this.ops[n] = from;
      this.ops[n + 1] = to;
      this.opCount = n + 2;
    }
    this.outLength += to - from;
  }

  /** Emits literal `literal` of the rule set's table (not empty). */
  private push(literal: number): void {
    this.pushPool(
      this.set.literalStart[literal] as number,
      this.set.literalStart[literal + 1] as number,
    );
  }

  /** Emits bytes `[from, to)` of the scan kernel's memory (a literal, or the loop's output). */
  private pushPool(from: number, to: number): void {
    if (to <= from) return;
    const n = this.opCount;
    if (n + 2 > this.ops.length) this.growOps();
    this.ops[n] = -1 - from;
    this.ops[n + 1] = to;
    this.opCount = n + 2;
    this.outLength += to - from;
  }

  private growOps(): void {
    const grown = new Int32Array(this.ops.length * 2);
    grown.set(this.ops);
    this.ops = grown;
  }

  /** The output made certain since the last call: what was copied out before, and the rest. */
  private takeOutput(): Buffer {
    const last = this.collect();
    if (this.spilled.length === 0) return last;
    const output = Buffer.concat([...this.spilled, last]);
    this.spilled.length = 0;
    return output;
  }

  /** Copies the pending output into one buffer, and empties the scan kernel's output area. */
  private collect(): Buffer {
    this.set.kernel.resetOutput();
    const ops = this.ops;
    const count = this.opCount;
    const length = this.outLength;
    this.bytesOut += length;
    this.outLength = 0;
    this.opCount = 0;
    if (count === 0) return EMPTY;
    const buf = this.buf;
    if (count === 2 && (ops[0] as number) >= 0 && buf !== this.window) {
      // The common case when nothing matched: a view of the caller's chunk, no copy.
      return Buffer.from(buf.buffer, buf.byteOffset + (ops[0] as number), length);
    }
    const result = Buffer.allocUnsafe(length);
    const out = new DataView(result.buffer, result.byteOffset, length);
    const words = this.bufWords();
    const pool = this.set.literalPool;
    const poolWords = this.set.literalPoolWords;
    let at = 0;
    for (let i = 0; i < count; i += 2) {
      const a = ops[i] as number;
      if (a >= 0) at = copyInto(result, out, at, buf, words, a, ops[i + 1] as number);
      else at = copyInto(result, out, at, pool, poolWords, -1 - a, ops[i + 1] as number);
    }
    return result;
  }
}

/**
 * Copies `source[from, to)` to `target[at...]` (`targetWords` and `sourceWords` view the same
 * bytes as 32-bit words). Most pieces are a few dozen bytes, where a native copy costs more in
 * its call than in its work and V8's byte loop runs at about 3 ns per byte: four bytes per
 * unaligned 32-bit read and write is 2-3 times faster there.
 */
function copyInto(
  target: Buffer,
  targetWords: DataView,
  at: number,
  source: Uint8Array,
  sourceWords: DataView<ArrayBufferLike>,
  from: number,
  to: number,
): number {
  if (to - from > 96) {
    // Buffer#copy accepts any Uint8Array source and allocates no view.
    return at + Buffer.prototype.copy.call(source, target, at, from, to);
  }
  const length = to - from;
  if (length < 4) {
    for (let i = from; i < to; i++) target[at++] = source[i] as number;
    return at;
  }
  for (let i = from, j = at; i < to - 4; i += 4, j += 4)
    targetWords.setUint32(j, sourceWords.getUint32(i, true), true);
  // The last four bytes in one go, overlapping what the loop copied (the same bytes again).
  targetWords.setUint32(at + length - 4, sourceWords.getUint32(to - 4, true), true);
  return at + length;
}
