/**
 * The request evaluator: the code on every request's hot path.
 *
 * ## Decision precedence (the one place it is defined)
 *
 * Rules are tried in three stages; inside a stage, range categories come first in the order
 * ip, country, asn, reputation, then pattern rules, and inside each of those, rule-set order.
 *
 * 1. **allow**: `allow` rules of every type. An allow always beats a block, whatever the type
 *    (an office range allow-listed stays reachable from a blocked country).
 * 2. **block**: `block` rules of every type.
 * 3. **rate_limit**: rate-limit rules whose conditions match count the request; the first one
 *    over its limit decides `rate_limit`.
 * 4. Otherwise **pass**.
 *
 * The first matching rule in `enforce` mode decides. A matching `monitor` rule does not stop
 * evaluation: the first one is remembered, and if no enforce rule decides, the decision is that
 * monitor rule's action with `mode: "monitor"` (the caller lets the request pass and reports it);
 * if an enforce rule decides, the monitor match is kept in `monitored`. Expired rules
 * (`expiresAt` <= now) are skipped. A client address that does not parse matches no range rule.
 *
 * ## Speed
 *
 * One binary search per range category (typed arrays, no SQL, no allocation), rule lists per
 * label set computed on first use and cached, a bounded memo of recent addresses' range results,
 * conditions compiled once per snapshot and indexed by field (see `pattern-index.ts`): those of
 * the pattern rules and of the rate limits in one index, so a request reads and looks up each
 * field once for all of them, and the rate-limit stage only counts. A request that meets no
 * range rule and no pattern rule, most of them, skips the allow and block stages.
 */
import { createHash } from 'node:crypto';
import { type IpAddress, ipToBigInt, parseIp, parseIpInto } from '../ip/address.js';
import { type IpRange, parseIpRange, rangeContains } from '../ip/range.js';
import {
  labelSetCount,
  labelsOfSet,
  lookupV4,
  lookupV6,
  type RangeTable,
} from '../ip/range-table.js';
import type { RateLimitKey, RateLimitRule, Rule } from '../rules/model.js';
import type { Snapshot } from '../snapshot/reader.js';
import { packCountry, RANGE_CATEGORIES, type RangeCategory } from '../snapshot/schema.js';
import { BoundedMemo } from './bounded-memo.js';
import type { Decision, DecisionCategory, RateLimitInfo, RuleMatch } from './decision.js';
import { DEFAULT_FIELD_MEMO, PatternIndex } from './pattern-index.js';
import { type Condition, compileConditions } from './pattern-matcher.js';
import { type RateLimiter, type RateLimitSeries, SlidingWindowLimiter } from './rate-limiter.js';
import { type RequestInfo, RequestView } from './request.js';

export interface EvaluatorOptions {
  /**
   * Counter store for rate limits; defaults to a bounded in-memory {@link SlidingWindowLimiter}.
   * Counters are keyed by rule id and window, so one limiter can be shared by the evaluators of
   * successive snapshots without resetting or mixing up counts.
   */
  readonly rateLimiter?: RateLimiter;
  /**
   * Client addresses whose range results are remembered (default 16 384, about 1.5 MB; 0 or 1
   * turns the memo off). See {@link BoundedMemo}: under load it saves most of the range stage's
   * cost for addresses that come back, and a flood of new ones cannot grow it.
   */
  readonly addressMemo?: number;
  /**
   * Raw field values (paths, user agents, hosts, headers, ...) whose pattern-guard results are
   * remembered, per field (default 1024; 0 or 1 turns the memo off). See
   * {@link PatternIndex}.
   */
  readonly fieldMemo?: number;
}

/** Per range category (in {@link RANGE_CATEGORIES} order): the positions of the rules it hits. */
type RangeCandidates = readonly (readonly number[])[];

export const DEFAULT_ADDRESS_MEMO = 16_384;

interface CompiledRule {
  readonly rule: Rule;
  readonly position: number;
  readonly expiresAtMs: number;
}

interface CompiledPatternRule extends CompiledRule {
  readonly action: 'allow' | 'block';
  readonly conditions: readonly Condition[];
}

interface CompiledRateLimit extends CompiledRule {
  readonly rule: RateLimitRule;
  /**
   * The rule's counters, by rule id and window: they follow the rule across snapshots (a client
   * shares one limiter between the evaluators it swaps), and changing the window starts afresh.
   */
  readonly series: RateLimitSeries;
  /** The addresses that count (`ranges`), null for every address. */
  readonly ranges: readonly IpRange[] | null;
  /** The rule's position in the condition index, -1 for a rule without conditions (every request). */
  readonly indexed: number;
  /**
   * Methods that count (upper case), null for all. A list, not a set: a rule names a handful,
   * and comparing a few short strings in place costs less than a hash lookup whose code and
   * table a busy server has evicted by the next request.
   */
  readonly methods: readonly string[] | null;
}

/** Rule positions that a label of a category stands for. */
type LabelIndex = (label: number) => readonly number[] | undefined;

interface CategoryIndex {
  readonly category: RangeCategory;
  readonly table: RangeTable;
  readonly rulesOfLabel: LabelIndex;
  /**
   * Per label set, the rules it matches, resolved on first use: 0 = not resolved yet, -1 = no
   * rule, k > 0 = `resolved[k - 1]` (positions, sorted). A typed array because a table can have
   * ~100k label sets: it is allocated zeroed in well under a millisecond, where any JS array of
   * that length costs several (the evaluator is built synchronously during a snapshot swap).
   */
  readonly slots: Int32Array;
  readonly resolved: (readonly number[])[];
}

const NONE: readonly number[] = Object.freeze([]);
/** The range result of most addresses: no range rule applies. */
const NO_CANDIDATES: RangeCandidates = Object.freeze(RANGE_CATEGORIES.map(() => NONE));
const EMPTY_REQUEST: RequestInfo = {
  ip: '',
  method: '',
  host: '',
  path: '',
  query: '',
  userAgent: '',
  headers: {},
};

export class Evaluator {
  readonly snapshotVersion: number;
  private readonly rules: readonly CompiledRule[];
  private readonly categories: readonly CategoryIndex[];
  /**
   * Every pattern rule, allow and block, in rule-set order, and one index over their conditions
   * and those of the rate limits (after them, so a request's pattern matches come first in its
   * result): a request's fields are read, and their memos consulted, once for all three stages.
   */
  private readonly patterns: readonly CompiledPatternRule[];
  private readonly conditionIndex: PatternIndex;
  private readonly rateLimits: readonly CompiledRateLimit[];
  private readonly limiter: RateLimiter;
  private readonly address = new Uint32Array(4);
  private readonly recentAddresses: BoundedMemo<RangeCandidates> | null;
  /** The current request's range result (per-call state; see `evaluate`). */
  private candidates: RangeCandidates = NO_CANDIDATES;
  private readonly view = new RequestView(EMPTY_REQUEST);
  private readonly run: EvaluationRun = {
    monitored: null,
    monitoredRateLimit: undefined,
    rateLimit: undefined,
    now: 0,
  };
  /** The decision for "nothing matched": the common case, shared and immutable. */
  private readonly passDecision: Decision;

  constructor(snapshot: Snapshot, options: EvaluatorOptions = {}) {
    this.snapshotVersion = snapshot.version;
    this.passDecision = Object.freeze(this.decision('pass', 'enforce', null, null, null));
    this.limiter = options.rateLimiter ?? new SlidingWindowLimiter();
    const memo = options.addressMemo ?? DEFAULT_ADDRESS_MEMO;
    this.recentAddresses = memo < 2 ? null : new BoundedMemo(memo);
    this.rules = snapshot.rules.map((rule, position) => ({
      rule,
      position,
      expiresAtMs: rule.expiresAt ? Date.parse(rule.expiresAt) : Number.POSITIVE_INFINITY,
    }));
    this.categories = RANGE_CATEGORIES.map((category) => ({
      category,
      table: snapshot.tables[category],
      rulesOfLabel: labelIndex(category, snapshot),
      slots: new Int32Array(labelSetCount(snapshot.tables[category])),
      resolved: [],
    }));
    this.patterns = this.rules.flatMap((c) =>
      c.rule.type === 'pattern'
        ? [{ ...c, action: c.rule.action, conditions: compileConditions(c.rule.when) }]
        : [],
    );
    const indexed: { readonly conditions: readonly Condition[] }[] = [...this.patterns];
    this.rateLimits = this.rules.flatMap((c) => {
      if (c.rule.type !== 'rate_limit') return [];
      const conditions = compileConditions(c.rule.when);
      if (conditions.length > 0) indexed.push({ conditions });
      return [
        {
          ...c,
          rule: c.rule,
          indexed: conditions.length > 0 ? indexed.length - 1 : -1,
          methods: c.rule.methods?.length ? [...new Set(c.rule.methods)] : null,
          ranges: c.rule.ranges ? c.rule.ranges.flatMap((text) => parseIpRange(text)) : null,
          series: this.limiter.series(c.rule.id, c.rule.windowSeconds * 1000),
        },
      ];
    });
    this.conditionIndex = new PatternIndex(indexed, {
      memo: options.fieldMemo ?? DEFAULT_FIELD_MEMO,
    });
  }

  /**
   * Decides what to do with `request` (see the module comment for the precedence). Decisions are
   * immutable and may be shared between calls. Not re-entrant: it keeps per-call state on the
   * evaluator, which is safe because it is synchronous.
   */
  evaluate(request: RequestInfo, now: number = Date.now()): Decision {
    this.findRangeCandidates(request.ip);
    const view = this.view.reset(request);
    const run = this.run;
    run.monitored = null;
    run.monitoredRateLimit = undefined;
    run.rateLimit = undefined;
    run.now = now;
    // Every stage's condition matches at once (the index's array, valid until its next call):
    // in index order, so the pattern rules' come first, then the rate limits'.
    const hits = this.conditionIndex.matching(view);
    const patternHits = countBelow(hits, this.patterns.length);
    // Most requests meet no range rule and no pattern rule. Neither stage can decide then, and
    // skipping both keeps the common path short: on a busy server its code is out of the CPU
    // caches by the next request, and fetching it back is much of what an evaluation costs.
    const decided =
      (this.candidates === NO_CANDIDATES && patternHits === 0
        ? undefined
        : (this.stage('allow', hits, patternHits, run) ??
          this.stage('block', hits, patternHits, run))) ??
      this.rateLimitStage(view, hits, patternHits, run);
    if (decided) return decided;
    // The stages mutate `run`; TypeScript still sees the values assigned above.
    const monitored = run.monitored as RuleMatch | null;
    if (monitored) {
      const rateLimit = run.monitoredRateLimit ?? run.rateLimit ?? null;
      return this.decision(monitored.action, 'monitor', monitored, null, rateLimit);
    }
    if (run.rateLimit) return this.decision('pass', 'enforce', null, null, run.rateLimit);
    return this.passDecision;
  }

  private findRangeCandidates(ip: string): void {
    const memo = this.recentAddresses;
    const known = memo?.get(ip);
    if (known !== undefined) {
      this.candidates = known;
      return;
    }
    const found = this.lookUpRanges(ip);
    memo?.set(ip, found);
    this.candidates = found;
  }

  private lookUpRanges(ip: string): RangeCandidates {
    const family = parseIpInto(ip, this.address);
    if (family !== 4 && family !== 6) return NO_CANDIDATES;
    let found: (readonly number[])[] | null = null;
    for (let i = 0; i < this.categories.length; i++) {
      const c = this.categories[i] as CategoryIndex;
      const set =
        family === 4
          ? lookupV4(c.table, this.address[0] as number)
          : lookupV6(c.table, this.address);
      if (set === -1) continue;
      const positions = this.rulesOfSet(c, set);
      if (positions === NONE) continue;
      found ??= [...NO_CANDIDATES];
      found[i] = positions;
    }
    return found ?? NO_CANDIDATES;
  }

  private rulesOfSet(c: CategoryIndex, set: number): readonly number[] {
    const slot = c.slots[set] as number;
    if (slot > 0) return c.resolved[slot - 1] as readonly number[];
    if (slot < 0) return NONE;
    const found = new Set<number>();
    for (const label of labelsOfSet(c.table, set)) {
      for (const position of c.rulesOfLabel(label) ?? NONE) found.add(position);
    }
    if (found.size === 0) {
      c.slots[set] = -1;
      return NONE;
    }
    const positions = [...found].sort((a, b) => a - b);
    c.slots[set] = c.resolved.push(positions);
    return positions;
  }

  /** `hits[0, patternHits)`: the request's matching pattern rules (positions in `patterns`). */
  private stage(
    action: 'allow' | 'block',
    hits: readonly number[],
    patternHits: number,
    run: EvaluationRun,
  ): Decision | undefined {
    for (let i = 0; i < this.categories.length; i++) {
      for (const position of this.candidates[i] as readonly number[]) {
        const compiled = this.rules[position] as CompiledRule;
        const rule = compiled.rule;
        if (rule.type === 'rate_limit' || rule.type === 'pattern' || rule.action !== action)
          continue;
        if (compiled.expiresAtMs <= run.now) continue;
        const decided = this.matched(
          compiled,
          action,
          (this.categories[i] as CategoryIndex).category,
          run,
        );
        if (decided) return decided;
      }
    }
    for (let k = 0; k < patternHits; k++) {
      const p = this.patterns[hits[k] as number] as CompiledPatternRule;
      if (p.action === action && p.expiresAtMs > run.now) {
        const decided = this.matched(p, action, 'pattern', run);
        if (decided) return decided;
      }
    }
    return undefined;
  }

  /** `hits[patternHits, ...)`: the rate limits whose conditions the request meets (index order). */
  private rateLimitStage(
    view: RequestView,
    hits: readonly number[],
    patternHits: number,
    run: EvaluationRun,
  ): Decision | undefined {
    let next = patternHits;
    for (const r of this.rateLimits) {
      if (r.indexed >= 0) {
        // Rules are indexed in the order of this loop, so one pass over the hits finds them.
        while (next < hits.length && (hits[next] as number) < r.indexed) next++;
        if (hits[next] !== r.indexed) continue;
      }
      if (r.expiresAtMs <= run.now) continue;
      if (r.methods && !r.methods.includes(view.method())) continue;
      if (r.ranges && !fromRanges(r.ranges, view.request.ip)) continue;
      const state = r.series.hit(rateLimitKey(r.rule.key, view), r.rule.limit, run.now);
      const info: RateLimitInfo = {
        ruleId: r.rule.id,
        limit: r.rule.limit,
        remaining: state.remaining,
        windowSeconds: r.rule.windowSeconds,
        resetSeconds: Math.max(1, Math.ceil(state.resetMs / 1000)),
      };
      if (!state.limited) {
        run.rateLimit ??= info;
        continue;
      }
      const decided = this.matched(r, 'rate_limit', 'rate_limit', run, info);
      if (decided) return decided;
    }
    return undefined;
  }

  /**
   * Records a match of a live rule (callers skip expired ones before testing them): returns the
   * decision for an enforce rule, remembers a monitor rule.
   */
  private matched(
    compiled: CompiledRule,
    action: RuleMatch['action'],
    category: DecisionCategory,
    run: EvaluationRun,
    rateLimit: RateLimitInfo | null = null,
  ): Decision | undefined {
    const match: RuleMatch = { action, ruleId: compiled.rule.id, category };
    if (compiled.rule.mode === 'enforce')
      return this.decision(action, 'enforce', match, run.monitored, rateLimit);
    run.monitored ??= match;
    if (rateLimit) run.monitoredRateLimit ??= rateLimit;
    return undefined;
  }

  private decision(
    action: Decision['action'],
    mode: Decision['mode'],
    match: RuleMatch | null,
    monitored: RuleMatch | null,
    rateLimit: RateLimitInfo | null,
  ): Decision {
    return {
      action,
      mode,
      ruleId: match?.ruleId ?? null,
      category: match?.category ?? null,
      snapshotVersion: this.snapshotVersion,
      monitored: mode === 'monitor' ? null : monitored,
      rateLimit,
    };
  }
}

/** How many of the ascending `list` are below `bound`. */
function countBelow(list: readonly number[], bound: number): number {
  let n = 0;
  while (n < list.length && (list[n] as number) < bound) n++;
  return n;
}

/** Per-evaluation state, kept on the evaluator and reset per request (evaluate is synchronous). */
interface EvaluationRun {
  monitored: RuleMatch | null;
  monitoredRateLimit: RateLimitInfo | undefined;
  rateLimit: RateLimitInfo | undefined;
  now: number;
}

/** Whether `ip` is inside one of `ranges` (false for text that is not an address). */
function fromRanges(ranges: readonly IpRange[], ip: string): boolean {
  let address: IpAddress;
  try {
    address = parseIp(ip);
  } catch {
    return false;
  }
  const value = ipToBigInt(address);
  return ranges.some((range) => rangeContains(range, address.family, value));
}

function rateLimitKey(key: RateLimitKey, view: RequestView): string {
  switch (key.kind) {
    case 'ip':
      return view.request.ip;
    case 'ip_path':
      return boundedKey(`${view.request.ip} ${view.path()}`);
    case 'header':
      return boundedKey(view.header(key.name) ?? '');
  }
}

/** Longest rate-limit key stored as it is. */
export const MAX_RATE_LIMIT_KEY = 128;

/**
 * A path or a header can be kilobytes long, and the limiter holds up to its capacity of keys (100
 * 000 by default): a client cycling long values must not make it hold gigabytes. Longer keys are
 * stored as their SHA-256 behind a NUL, which neither a path nor a header value can contain, so
 * they never collide with a short key.
 */
function boundedKey(text: string): string {
  if (text.length <= MAX_RATE_LIMIT_KEY) return text;
  return `\u0000${createHash('sha256').update(text).digest('base64url')}`;
}

/** Maps each label of a category to the positions of the rules that name it. */
function labelIndex(category: RangeCategory, snapshot: Snapshot): LabelIndex {
  const byLabel = new Map<number, number[]>();
  const add = (label: number, position: number) => {
    const list = byLabel.get(label);
    if (list) list.push(position);
    else byLabel.set(label, [position]);
  };
  const listIndex = new Map<string, number>();
  if (category === 'reputation') {
    for (let label = 0; ; label++) {
      const stored = snapshot.labelValue('reputation', label);
      if (!stored) break;
      listIndex.set(stored.value, label);
    }
  }
  snapshot.rules.forEach((rule, position) => {
    if (category === 'ip' && rule.type === 'ip') add(position, position);
    if (category === 'country' && rule.type === 'country')
      for (const c of rule.countries) add(packCountry(c), position);
    if (category === 'asn' && rule.type === 'asn') for (const a of rule.asns) add(a, position);
    if (category === 'reputation' && rule.type === 'reputation') {
      for (const name of rule.lists) {
        const label = listIndex.get(name);
        if (label !== undefined) add(label, position);
      }
    }
  });
  return (label) => byLabel.get(label);
}
