/**
 * A substitution rule set (SUBSTITUTION-SPEC points 1, 7, 8), compiled once and shared by every
 * stream that uses it: one NFA and one lazy DFA for all rules, a template per rule, and a Pike
 * VM per rule whose template needs groups (built on first use).
 *
 * Errors name the rule by its index in the list, quote its pattern, and give the position and
 * the construct: `rule 2 ("a(?=b)"): position 1: lookahead is not supported`.
 */
import { type DfaOptions, LazyDfa, type MatchKind } from '../regex/lazy-dfa/lazy-dfa.js';
import { compileNfa, type Nfa, NfaTooLargeError } from '../regex/nfa/nfa.js';
import { BoundedBacktracker } from '../regex/pike-vm/bounded-backtracker.js';
import { FixedSpans } from '../regex/pike-vm/fixed-spans.js';
import { OnePass } from '../regex/pike-vm/one-pass.js';
import { PikeVm } from '../regex/pike-vm/pike-vm.js';
import type { ParsedPattern } from '../regex/syntax/ast.js';
import { parsePattern, RegexSyntaxError } from '../regex/syntax/parser.js';
import { ScanKernel } from './scan-kernel/scan-kernel.js';
import { compileTemplate, type Template, TemplateError } from './template.js';

export type { MatchKind };

/** One rule as configured: `flags` is a subset of "gi" (default: "" = once, case-sensitive). */
export interface SubstitutionRule {
  readonly pattern: string;
  readonly replacement: string;
  readonly flags?: string;
}

export interface RuleSetOptions {
  /** `leftmost-first` (default, sregex's behaviour) or `leftmost-longest` (opt-in). */
  readonly matchKind?: MatchKind;
  /** Bound of the lazy DFA cache in bytes (default 8 MiB, at most {@link MAX_CACHE_BYTES}). */
  readonly cacheBytes?: number;
}

/**
 * The largest DFA cache bound: the scan kernel's memory holds about twice the cache (grown
 * tables are not freed), and a kernel's memory is at most 2 GiB.
 */
export const MAX_CACHE_BYTES = 512 * 1024 * 1024;

export class RuleSetError extends Error {
  constructor(
    readonly ruleIndex: number,
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`rule ${ruleIndex} (${JSON.stringify(pattern)}): ${reason}`);
    this.name = 'RuleSetError';
  }
}

export interface CompiledRule {
  readonly index: number;
  readonly pattern: string;
  /** Without `g` a rule replaces its first match only (later ones pass through unchanged). */
  readonly once: boolean;
  readonly caseInsensitive: boolean;
  readonly template: Template;
  readonly groupCount: number;
}

export class CompiledRuleSet {
  /**
   * Every literal piece of every template, one after another in the scan kernel's memory (the
   * loop copies constant replacements itself), so that output can refer to one by number:
   * literal n is `literalPool[literalStart[n], literalStart[n + 1])`, `literalPool` being that
   * whole memory (the output area the loop writes is a range of it too). A template is
   * `programs[rule]`, where an entry >= 0 is a literal and `-1 - n` is group n. One buffer for
   * all of them keeps the output's copies on one source and their lengths one load away.
   */
  readonly literalPool: Buffer;
  /** `literalPool` as a DataView, for the output's word-at-a-time copies. */
  readonly literalPoolWords: DataView;
  readonly literalStart: Int32Array;
  readonly programs: readonly Int32Array[];
  /** Per rule: the literal that is its whole replacement, -1 when it uses groups. */
  readonly constants: Int32Array;
  private readonly vms: Array<PikeVm | undefined>;
  private readonly backtrackers: Array<BoundedBacktracker | undefined>;
  /** Per rule: its one-pass tables, null when it is not one-pass, undefined before the first use. */
  private readonly onePass: Array<OnePass | null | undefined>;

  constructor(
    readonly rules: readonly CompiledRule[],
    readonly nfa: Nfa,
    readonly dfa: LazyDfa,
    /** Per rule: its groups' places when the match's ends fix them all (see FixedSpans). */
    private readonly fixedSpans: readonly (FixedSpans | undefined)[],
    /** The scanning loop, whose memory holds `dfa`'s tables (see ScanKernel). */
    readonly kernel: ScanKernel,
    literals: LiteralTable,
  ) {
    this.vms = rules.map(() => undefined);
    this.backtrackers = rules.map(() => undefined);
    this.onePass = rules.map(() => undefined);
    this.programs = literals.programs;
    this.constants = literals.constants;
    const memory = kernel.memory;
    this.literalPool = Buffer.from(memory.buffer, memory.byteOffset, memory.byteLength);
    this.literalPoolWords = new DataView(memory.buffer, memory.byteOffset, memory.byteLength);
    this.literalStart = literals.start.map((offset) => kernel.poolAt + offset);
    kernel.placeLiterals(
      literals.pool,
      Array.from(literals.constants, (n) =>
        n < 0 ? [-1, -1] : [literals.start[n] as number, literals.start[n + 1] as number],
      ),
    );
  }

  /**
   * Capture slots of `rule`'s match over `bytes[start, end)` (see PikeVm.captures): from the
   * span's ends alone when they fix every group (FixedSpans), else in one pass when the rule is
   * one-pass, else by bounded backtracking when the span is short enough, else by the Pike VM.
   * Same result every way (property-tested).
   */
  captures(
    rule: number,
    bytes: Uint8Array,
    start: number,
    end: number,
    prev: number,
    next: number,
  ): Int32Array | undefined {
    const fixed = this.fixedSpans[rule];
    if (fixed !== undefined) return fixed.captures(start, end);
    let onePass = this.onePass[rule];
    if (onePass === undefined) {
      onePass = OnePass.build(this.nfa, rule) ?? null;
      this.onePass[rule] = onePass;
    }
    if (onePass !== null) {
      const slots = onePass.captures(bytes, start, end, prev, next);
      if (slots !== undefined) return slots;
    }
    let bt = this.backtrackers[rule];
    if (bt === undefined) {
      const range = this.nfa.ruleRanges[rule];
      if (range === undefined) throw new RangeError(`no rule ${rule}`);
      bt = new BoundedBacktracker(this.nfa, rule, range);
      this.backtrackers[rule] = bt;
    }
    if (bt.fits(end - start)) return bt.captures(bytes, start, end, prev, next);
    return this.pikeVm(rule).captures(bytes, start, end, prev, next);
  }

  get matchKind(): MatchKind {
    return this.dfa.matchKind;
  }

  /** The Pike VM that computes captures for `rule`. */
  pikeVm(rule: number): PikeVm {
    let vm = this.vms[rule];
    if (vm === undefined) {
      const range = this.nfa.ruleRanges[rule];
      if (range === undefined) throw new RangeError(`no rule ${rule}`);
      vm = new PikeVm(this.nfa, rule, range);
      this.vms[rule] = vm;
    }
    return vm;
  }
}

/** Validates and compiles `rules` (in priority order); throws {@link RuleSetError}. */
export function compileRuleSet(
  rules: readonly SubstitutionRule[],
  options: RuleSetOptions = {},
): CompiledRuleSet {
  const matchKind = options.matchKind ?? 'leftmost-first';
  if (matchKind !== 'leftmost-first' && matchKind !== 'leftmost-longest') {
    throw new TypeError(`matchKind must be "leftmost-first" or "leftmost-longest"`);
  }
  const compiled: CompiledRule[] = [];
  const parsed: ParsedPattern[] = [];
  rules.forEach((rule, index) => {
    const fail = (reason: string) => new RuleSetError(index, String(rule?.pattern), reason);
    if (typeof rule !== 'object' || rule === null) throw fail('must be an object');
    if (typeof rule.pattern !== 'string') throw fail('"pattern" must be a string');
    if (typeof rule.replacement !== 'string') throw fail('"replacement" must be a string');
    const flags = rule.flags ?? '';
    if (typeof flags !== 'string') throw fail('"flags" must be a string');
    const bad = [...flags].find((f) => f !== 'g' && f !== 'i');
    if (bad !== undefined) throw fail(`unknown flag "${bad}" (flags are a subset of "gi")`);
    try {
      const p = parsePattern(rule.pattern, { caseInsensitive: flags.includes('i') });
      parsed.push(p);
      compiled.push({
        index,
        pattern: rule.pattern,
        once: !flags.includes('g'),
        caseInsensitive: flags.includes('i'),
        template: compileTemplate(rule.replacement),
        groupCount: p.groupCount,
      });
    } catch (error) {
      if (error instanceof RegexSyntaxError || error instanceof TemplateError) {
        throw fail(error.message);
      }
      throw error;
    }
  });
  let nfa: Nfa;
  try {
    nfa = compileNfa(parsed);
  } catch (error) {
    if (error instanceof NfaTooLargeError) {
      throw new RuleSetError(error.rule, rules[error.rule]?.pattern ?? '', error.message);
    }
    throw error;
  }
  const cacheBytes = options.cacheBytes ?? 8 * 1024 * 1024;
  if (!(Number.isInteger(cacheBytes) && cacheBytes >= 1 && cacheBytes <= MAX_CACHE_BYTES))
    throw new RangeError(`cacheBytes must be an integer from 1 to ${MAX_CACHE_BYTES}`);
  const literals = literalTable(compiled);
  const fixedSpans = parsed.map((p) =>
    p.groupCount > 0 ? FixedSpans.analyse(p.ast, p.groupCount) : undefined,
  );
  const templates = compiled.map((r, k) =>
    (literals.constants[k] as number) >= 0
      ? undefined
      : loopTemplate(
          literals.programs[k] as Int32Array,
          literals.start,
          fixedSpans[k],
          r.groupCount,
        ),
  );
  // One register per live group of partial matches: at most one per NFA state.
  const kernel = new ScanKernel(
    compiled.length,
    nfa.stateCount + 1,
    literals.pool.length,
    templates,
  );
  const dfaOptions: DfaOptions = { matchKind, cacheBytes, tableSpace: kernel };
  return new CompiledRuleSet(
    compiled,
    nfa,
    new LazyDfa(nfa, dfaOptions),
    fixedSpans,
    kernel,
    literals,
  );
}

/**
 * A template with groups as the scan loop writes it itself (see ScanKernel): triples (kind, a,
 * b), kind 0 a literal `[a, b)` of the pool, kind 1 a slice of the match from `a` to `b`, each
 * a position encoded as FixedSpans does (>= 0 from the match's start, `-1 - n`: `n` back from
 * its end). Undefined when a group's place needs the match's captures (no fixed spans).
 */
function loopTemplate(
  program: Int32Array,
  literalStart: Int32Array,
  spans: FixedSpans | undefined,
  groupCount: number,
): Int32Array | undefined {
  const entries: number[] = [];
  for (const op of program) {
    if (op >= 0) {
      entries.push(0, literalStart[op] as number, literalStart[op + 1] as number);
      continue;
    }
    const group = -1 - op;
    if (group === 0) entries.push(1, 0, -1);
    else if (group > groupCount)
      continue; // no such group: it writes nothing
    else if (spans === undefined) return undefined;
    else entries.push(1, ...spans.span(group));
  }
  return Int32Array.from(entries);
}

/** The rules' templates as literals in one pool (see {@link CompiledRuleSet.literalPool}). */
interface LiteralTable {
  readonly pool: Buffer;
  /** Literal n is `pool[start[n], start[n + 1])`. */
  readonly start: Int32Array;
  readonly programs: readonly Int32Array[];
  readonly constants: Int32Array;
}

function literalTable(rules: readonly CompiledRule[]): LiteralTable {
  const literals: Uint8Array[] = [];
  const literalId = (bytes: Uint8Array) => literals.push(bytes) - 1;
  const programs = rules.map((r) =>
    Int32Array.from(
      r.template.parts.filter((part) => typeof part === 'number' || part.length > 0),
      (part) => (typeof part === 'number' ? -1 - part : literalId(part)),
    ),
  );
  const constants = Int32Array.from(rules, (r) =>
    r.template.constant === undefined ? -1 : literalId(r.template.constant),
  );
  const start = new Int32Array(literals.length + 1);
  for (let n = 0; n < literals.length; n++)
    start[n + 1] = (start[n] as number) + (literals[n] as Uint8Array).length;
  return { pool: Buffer.concat(literals), start, programs, constants };
}
