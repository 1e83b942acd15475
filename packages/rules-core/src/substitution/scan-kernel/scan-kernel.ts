/**
 * The substituter's hot loop (one DFA transition per byte; `Substituter.scan` states its contract),
 * compiled to WebAssembly from `scan.wat`, and the memory it reads.
 *
 * Why: the same loop in JavaScript keeps a bounds check on every typed-array read, and on the
 * dense benchmark set this loop is most of the engine's time. Hand-written WebAssembly walked the
 * same transition table about 1.5x faster (the rules-core README has the measurements).
 *
 * How the memory is shared, one kernel (one `WebAssembly.Memory`) per compiled rule set:
 * - The kernel is the lazy DFA's {@link TableSpace}: the tables the loop reads are allocated in
 *   its memory, and the DFA builds states into them in place, so nothing is copied when a state
 *   is built. The memory is sized for the DFA's largest tables up front and never grows (growing
 *   would detach every typed array on it); pages never written are never backed by RAM.
 * - The buffer being scanned is copied into a window of the memory, 64 KiB at a time, once per
 *   `scan()` of the substituter (plus a byte of look-behind): about one copy per input byte,
 *   and a native copy is far cheaper than a byte of scanning.
 * - Registers (a few ints) and the per-rule `inline` codes are copied in per call, registers
 *   back out after it.
 * - The loop writes the output of the matches it settles itself: the bytes before each match
 *   and its replacement (a constant from the rule set's literal pool, which lives in this
 *   memory; a template whose groups sit at fixed offsets from the match's ends; or the match
 *   itself) are appended to an output area, the substituter refers to that range and copies it
 *   out once per chunk with the rest of its output. Settling a match costs a few native copies
 *   instead of a trip through JavaScript per match (on the dense benchmark page, a match every
 *   ~70 bytes). Matches whose template needs the match's captures are queued
 *   ({@link ScanKernel.queue}) with their place in the output; counters per rule are kept here
 *   and added to the substituter's after each call.
 * - The DFA's general register moves (`LazyDfa.actions`: partial matches reordered, a fresh one
 *   kept) are copied in once each, so the loop applies them itself instead of leaving them to
 *   the slow path (on the dense set, 2 300 exits per MiB before).
 *
 * Layout, in bytes: [0, 64) results, [64, ...) the match queue, then registers, the `inline`
 * codes, the rules' replacement ranges, counters and touched list, the window, the general
 * register moves, the literal pool, the loop templates, the output area, then the DFA's tables.
 */
/// <reference path="./webassembly.d.ts" />
import type { LazyDfa, SkipTables, TableSpace } from '../../regex/lazy-dfa/lazy-dfa.js';
import { SCAN_WASM } from './scan-wasm.js';

/** Compiled on first use, once per process (a few KB: synchronous compilation is quick). */
let scanModule: WebAssembly.Module | undefined;

/** Where the loop leaves its results besides the index it returns: eight ints, [0, 32). */
const OUT_BYTE = 0;
/** Those results' int indices from OUT_BYTE, in the order scan.wat stores them. */
const OUT_STATE = 0;
const OUT_MATCH_TARGET = 1;
const OUT_MATCH_AT = 2;
const OUT_QUEUED = 3;
const OUT_LAST_RESTART = 4;
const OUT_EMIT_POS = 5;
const OUT_OUTPUT_AT = 6;
const OUT_TOUCHED = 7;
const QUEUE_BYTE = 64;
/** Ints of the match queue (rule, start, end, output end before it): 512 matches per call at most. */
const QUEUE_INTS = 2048;
const REGS_BYTE = QUEUE_BYTE + 4 * QUEUE_INTS;
/** Bytes of the scanned buffer copied into the memory at a time. */
const WINDOW_BYTES = 64 * 1024;
/**
 * General register moves (the DFA's `actions`) copied into the memory, so the loop applies them
 * itself: at most this many, in at most MOVE_BYTES. The dense benchmark set has 3; a move beyond
 * either bound is left to the slow path.
 */
const MAX_MOVES = 1024;
const MOVE_BYTES = 32 * 1024;
/**
 * The output area. The substituter copies it out (and empties it) when more than half is used,
 * so a call always starts with at least half free; a match whose output does not fit is left to
 * the slow path.
 */
const OUTPUT_BYTES = 256 * 1024;
/**
 * Positions are int32 in the loop: an index plus the buffer limit must stay below 2^31, so both
 * are kept below 2^30. A buffer longer than that (one chunk over 1 GiB) is scanned by the
 * substituter's slow path.
 */
const MAX_INDEX = 2 ** 30;
const PAGE_BYTES = 65536;
/** Largest memory a kernel may reserve (the DFA cache bound decides; see RuleSetOptions). */
const MAX_KERNEL_BYTES = 2 ** 31;

/** Inline codes (per rule, see {@link ScanKernel.run}). */
export const INLINE_NEVER = 0;
export const INLINE_CONSTANT = 1;
export const INLINE_COPY = 2;
export const INLINE_QUEUED = 3;
export const INLINE_TEMPLATE = 4;

type ScanFunction = (
  i: number,
  stop: number,
  end: number,
  s: number,
  maxRel: number,
  buf: number,
  classes: number,
  trans: number,
  acts: number,
  facts: number,
  idles: number,
  ruleOf: number,
  regOf: number,
  stride: number,
  inline: number,
  regs: number,
  bits: number,
  skipMode: number,
  flags: number,
  moves: number,
  moveCount: number,
  queue: number,
  queueInts: number,
  out: number,
  emitPos: number,
  lo: number,
  lits: number,
  counts: number,
  touched: number,
  outAt: number,
  outEnd: number,
  templates: number,
) => number;

/** What {@link ScanKernel.run} leaves besides the index it returns (reused, never reallocated). */
export interface ScanOut {
  state: number;
  matchTarget: number;
  matchAt: number;
  deadline: number;
  queued: number;
  /** Where the bytes not yet in the output start now (an index of the buffer). */
  emitPos: number;
}

export class ScanKernel implements TableSpace {
  /**
   * After {@link run}: `out.queued` ints, (rule, start, end, output) per match whose replacement
   * is left to JavaScript: start and end relative to the buffer, output the address in
   * {@link memory} where the output before the match ends.
   */
  queue: Int32Array = new Int32Array(0);
  readonly out: ScanOut = {
    state: 0,
    matchTarget: -1,
    matchAt: 0,
    deadline: 0,
    queued: 0,
    emitPos: 0,
  };
  /** The whole memory: the literal pool and the output area are ranges of it. */
  memory: Uint8Array = new Uint8Array(0);
  /** The output area's start, and where the loop appends next (see {@link resetOutput}). */
  readonly outputStart: number;
  outputAt: number;
  private scanFn: ScanFunction | undefined;
  private i32: Int32Array = new Int32Array(0);
  private u8: Uint8Array = new Uint8Array(0);
  private readonly inlineAt: number;
  /** Per rule: the address range [from, to) of its constant replacement (code 1). */
  private readonly litsAt: number;
  /** Per rule: [matches, replacements] counted by the loop since the last fold. */
  private readonly countsAt: number;
  /** The rules the loop counted first in its last call. */
  private readonly touchedAt: number;
  private readonly windowAt: number;
  /** Where the literal pool is (see {@link placeLiterals}). */
  readonly poolAt: number;
  /** Per rule: the address of its loop template (`[n, n ints]`), 0 for none; then those. */
  private readonly templatesAt: number;
  /** `[MAX_MOVES]` addresses of the copied moves, then the moves: `[n, origin 0, ...]` each. */
  private readonly movesAt: number;
  private movesCopied = 0;
  /** Where the next copied move goes, and where the moves' space ends. */
  private movesEnd: number;
  private readonly movesLimit: number;
  private next: number;
  private limit = 0;
  /** The buffer whose bytes `[windowFrom, windowTo)` are at `windowAt` (null: none). */
  private windowOf: Uint8Array | null = null;
  private windowFrom = 0;
  private windowTo = 0;

  /**
   * `ruleCount`: rules of the set (one `inline` code each); `maxRegisters`: the most registers a
   * stream can hold (the DFA's live groups, at most its NFA's state count); `poolBytes`: the
   * length of the rule set's literal pool; `templates`: per rule, the template the loop writes
   * itself (code INLINE_TEMPLATE: triples kind, a, b as `loopTemplate` in rule-set.ts makes them).
   */
  constructor(
    ruleCount: number,
    private readonly maxRegisters: number,
    private readonly poolBytes: number,
    private readonly templates: readonly (Int32Array | undefined)[] = [],
  ) {
    this.inlineAt = align8(REGS_BYTE + 4 * maxRegisters);
    this.litsAt = align8(this.inlineAt + ruleCount);
    this.countsAt = this.litsAt + 8 * ruleCount;
    this.touchedAt = this.countsAt + 8 * ruleCount;
    this.windowAt = align8(this.touchedAt + 4 * ruleCount);
    this.movesAt = align8(this.windowAt + WINDOW_BYTES + 8);
    this.movesEnd = this.movesAt + 4 * MAX_MOVES;
    this.movesLimit = this.movesEnd + MOVE_BYTES;
    this.poolAt = this.movesLimit;
    this.templatesAt = align8(this.poolAt + poolBytes);
    const templateInts = templates.reduce((n, t) => n + (t === undefined ? 0 : t.length + 1), 0);
    this.outputStart = align8(this.templatesAt + 4 * (ruleCount + templateInts));
    this.outputAt = this.outputStart;
    this.next = this.outputStart + OUTPUT_BYTES;
  }

  /**
   * Copies the rule set's literal pool into the memory (at {@link poolAt}) and records each
   * rule's constant replacement: `constants[rule]` is `[from, to)` of the pool, or from -1 for
   * none. Once, after the DFA reserved the memory.
   */
  placeLiterals(pool: Uint8Array, constants: readonly (readonly [number, number])[]): void {
    if (pool.length !== this.poolBytes) throw new RangeError('the pool is not the size reserved');
    this.memory.set(pool, this.poolAt);
    const lits = this.litsAt >> 2;
    constants.forEach(([from, to], rule) => {
      this.i32[lits + 2 * rule] = from < 0 ? 0 : this.poolAt + from;
      this.i32[lits + 2 * rule + 1] = from < 0 ? 0 : this.poolAt + to;
    });
    let at = (this.templatesAt >> 2) + constants.length;
    this.templates.forEach((template, rule) => {
      if (template === undefined) return;
      this.i32[(this.templatesAt >> 2) + rule] = at << 2;
      this.i32[at++] = template.length;
      for (let k = 0; k < template.length; k += 3) {
        const literal = template[k] === 0 ? this.poolAt : 0;
        this.i32[at++] = template[k] as number;
        this.i32[at++] = (template[k + 1] as number) + literal;
        this.i32[at++] = (template[k + 2] as number) + literal;
      }
    });
  }

  /** Whether the loop writes `rule`'s template itself (it has one: INLINE_TEMPLATE). */
  writesTemplate(rule: number): boolean {
    return this.templates[rule] !== undefined;
  }

  /** Empties the output area (its user has copied out what it refers to). */
  resetOutput(): void {
    this.outputAt = this.outputStart;
  }

  /** Whether the output area is more than half used (its user should copy it out). */
  get outputFilling(): boolean {
    return this.outputAt - this.outputStart > OUTPUT_BYTES / 2;
  }

  reserve(maxBytes: number): void {
    if (this.scanFn !== undefined) throw new Error('a scan kernel serves one DFA');
    const bytes = this.next + maxBytes;
    if (bytes > MAX_KERNEL_BYTES)
      throw new RangeError(
        `the DFA's tables would need ${bytes} bytes (at most ${MAX_KERNEL_BYTES})`,
      );
    const pages = Math.ceil(bytes / PAGE_BYTES);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    scanModule ??= new WebAssembly.Module(SCAN_WASM);
    const instance = new WebAssembly.Instance(scanModule, { kernel: { memory } });
    this.scanFn = instance.exports.scan as ScanFunction;
    this.i32 = new Int32Array(memory.buffer);
    this.u8 = new Uint8Array(memory.buffer);
    this.memory = this.u8;
    this.queue = this.i32.subarray(QUEUE_BYTE / 4, QUEUE_BYTE / 4 + QUEUE_INTS);
    this.limit = pages * PAGE_BYTES;
  }

  int32(length: number): Int32Array {
    return new Int32Array(this.u8.buffer, this.take(4 * length), length);
  }

  uint8(length: number): Uint8Array {
    return new Uint8Array(this.u8.buffer, this.take(length), length);
  }

  /** The buffer's bytes may have changed (a new chunk, held bytes moved): copy them anew. */
  forgetWindow(): void {
    this.windowOf = null;
  }

  /**
   * The contract of the substituter's fast loop (see `Substituter.scan`): scans `buf` from `i`
   * until `end`, the buffer-limit deadline, or a transition that needs the slow path, and returns
   * the index of the first byte not consumed. Also returns early at the end of the copied window
   * (the slow path then takes one byte, and the next call copies the next window). Results in
   * {@link out} and {@link queue}; `regs` is updated in place.
   *
   * Settling: `inline[rule]` says what the loop may do with a non-empty match of the rule
   * (INLINE_*: never, its constant replacement, the match unchanged, queue it for JavaScript,
   * or write its template); the bytes from `emitPos` (an index of `buf`) to each settled match and its
   * output are appended to the output area (from {@link outputAt}, which moves), and the
   * matches and replacements counted are added to `matchCounts` and `replaceCounts`.
   */
  run(
    buf: Uint8Array,
    i: number,
    end: number,
    base: number,
    s: number,
    dfa: LazyDfa,
    regs: number[],
    deadline: number,
    maxBuffered: number,
    skip: SkipTables | undefined,
    inline: Uint8Array,
    emitPos: number,
    matchCounts: Int32Array,
    replaceCounts: Int32Array,
  ): number {
    const out = this.out;
    const scan = this.scanFn;
    const limit = Math.min(deadline, i + base + maxBuffered);
    out.state = s;
    out.matchTarget = -1;
    out.deadline = limit;
    out.queued = 0;
    out.emitPos = emitPos;
    if (scan === undefined || end > MAX_INDEX || regs.length > this.maxRegisters) return i;
    if (this.windowOf !== buf || Math.max(0, i - 1) < this.windowFrom || i >= this.windowTo)
      this.copyWindow(buf, i, end, emitPos);
    const windowEnd = Math.min(end, this.windowTo);
    const stop = Math.min(windowEnd, limit - base);
    if (!(stop > i)) return i;
    const i32 = this.i32;
    const regsAt = REGS_BYTE >> 2;
    for (let k = 0; k < regs.length; k++) i32[regsAt + k] = regs[k] as number;
    this.u8.set(inline, this.inlineAt);
    if (dfa.actions.length > this.movesCopied) this.copyMoves(dfa.actions);
    const tables =
      skip !== undefined && idlesBuilt(skip.facts, dfa.startOffsetTable) ? skip : undefined;
    const next = scan(
      i,
      stop,
      windowEnd,
      s,
      Math.min(maxBuffered, MAX_INDEX),
      this.windowAt - this.windowFrom,
      dfa.classes.byteOffset,
      dfa.trans.byteOffset,
      dfa.acts.byteOffset,
      dfa.factsAfter.byteOffset,
      dfa.startOffsetTable.byteOffset,
      dfa.ruleOf.byteOffset,
      dfa.regOf.byteOffset,
      dfa.stride,
      this.inlineAt,
      REGS_BYTE,
      tables === undefined ? 0 : tables.pairBits.byteOffset,
      tables === undefined ? 0 : tables.uniform ? 2 : 1,
      dfa.flags.byteOffset,
      this.movesAt,
      this.movesCopied,
      QUEUE_BYTE,
      QUEUE_INTS,
      OUT_BYTE,
      emitPos,
      this.windowFrom,
      this.litsAt,
      this.countsAt,
      this.touchedAt,
      this.outputAt,
      this.outputStart + OUTPUT_BYTES,
      this.templatesAt,
    );
    for (let k = 0; k < regs.length; k++) regs[k] = i32[regsAt + k] as number;
    const results = OUT_BYTE >> 2;
    out.state = i32[results + OUT_STATE] as number;
    out.matchTarget = i32[results + OUT_MATCH_TARGET] as number;
    out.matchAt = i32[results + OUT_MATCH_AT] as number;
    out.queued = i32[results + OUT_QUEUED] as number;
    const lastRestart = i32[results + OUT_LAST_RESTART] as number;
    out.emitPos = i32[results + OUT_EMIT_POS] as number;
    this.outputAt = i32[results + OUT_OUTPUT_AT] as number;
    const touched = i32[results + OUT_TOUCHED] as number;
    for (let k = 0; k < touched; k++) {
      const rule = i32[(this.touchedAt >> 2) + k] as number;
      const at = (this.countsAt >> 2) + 2 * rule;
      matchCounts[rule] = (matchCounts[rule] as number) + (i32[at] as number);
      replaceCounts[rule] = (replaceCounts[rule] as number) + (i32[at + 1] as number);
      i32[at] = 0;
      i32[at + 1] = 0;
    }
    // After a restart nothing older is live: the limit counts from the last one.
    if (lastRestart >= 0) out.deadline = lastRestart + base + maxBuffered;
    return next;
  }

  /**
   * Copies `buf[i - 1, ...)` (the byte before `i` is read at idle states), up to the window size,
   * from `emitPos` on when that is not far before (the loop copies bytes from there into the
   * output; when they are not in the window it leaves the next match to the slow path).
   */
  private copyWindow(buf: Uint8Array, i: number, end: number, emitPos: number): void {
    const from = Math.max(0, i - emitPos <= WINDOW_BYTES / 4 ? Math.min(i - 1, emitPos) : i - 1);
    const to = Math.min(end, from + WINDOW_BYTES);
    this.u8.set(buf.subarray(from, to), this.windowAt);
    this.windowOf = buf;
    this.windowFrom = from;
    this.windowTo = to;
  }

  /**
   * Copies the DFA's register moves not copied yet, while they fit. Move ids never change (a
   * cache clear keeps them), so each is copied once.
   */
  private copyMoves(moves: readonly Int32Array[]): void {
    const i32 = this.i32;
    while (this.movesCopied < Math.min(moves.length, MAX_MOVES)) {
      const move = moves[this.movesCopied] as Int32Array;
      const at = this.movesEnd;
      if (at + 4 * (move.length + 1) > this.movesLimit) return;
      i32[at >> 2] = move.length;
      i32.set(move, (at >> 2) + 1);
      i32[(this.movesAt >> 2) + this.movesCopied] = at;
      this.movesEnd = at + 4 * (move.length + 1);
      this.movesCopied++;
    }
  }

  private take(bytes: number): number {
    const at = this.next;
    if (this.scanFn === undefined) throw new Error('reserve() first');
    if (at + bytes > this.limit) throw new RangeError('the scan kernel is out of table space');
    this.next = align8(at + bytes);
    return at;
  }
}

/** Whether the idle state of every facts value exists in the current cache generation. */
function idlesBuilt(facts: Int32Array, idles: Int32Array): boolean {
  for (let k = 0; k < facts.length; k++)
    if ((idles[facts[k] as number] as number) < 0) return false;
  return true;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
