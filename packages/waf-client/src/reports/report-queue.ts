/**
 * The bounded in-memory store of what happened, filled on the request path and emptied by the
 * flusher. Recording is O(1) and never blocks, allocates little and never does I/O.
 *
 * Two kinds of data, so totals stay exact when events are thinned:
 * - **counts**: one counter per (action, mode, rule id, outcome) for every request since the
 *   last batch, always exact (a handful of entries: bounded by the number of rules).
 * - **events**: one record per request worth looking at. Blocks, rate limits and monitor matches
 *   are always recorded; passed and allowed requests only as a random sample
 *   (`passSampleRate`). Events go into a ring buffer of `capacity`; when it is full the new event
 *   is dropped and counted (the counts still include it).
 *
 * A batch that cannot be delivered gives its counts back ({@link mergeCounts}), so the totals
 * the hub eventually receives stay exact even across failed batches; its events are dropped.
 */
import { ownCopy } from '@rampart/rules-core/evaluator/bounded-memo';
import type { DecisionAction, DecisionCategory } from '@rampart/rules-core/evaluator/decision';

/** Longest path, user agent and host an event keeps (longer ones are cut). */
export const REPORT_TEXT_LIMITS = Object.freeze({ path: 1024, userAgent: 512, host: 256 });

/**
 * `text` as a report event keeps it: cut to `max` characters, in memory of its own. Events wait
 * in a queue of up to `reportQueueSize` (10 000) while the hub is unreachable, and a path is a
 * slice of a URL of up to 16 KB that would otherwise stay alive with it.
 */
export function reportText(text: string, max: number): string {
  return ownCopy(text.length > max ? text.slice(0, max) : text);
}

/** What the client did with the request. */
export type Outcome = 'passed' | 'blocked' | 'rate_limited' | 'failed_open' | 'failed_closed';

/** `unevaluated`: no snapshot was loaded, or the WAF failed on this request. */
export type ReportAction = DecisionAction | 'unevaluated';

export interface ReportEvent {
  readonly requestId: string;
  /** Epoch milliseconds. */
  readonly time: number;
  readonly ip: string;
  readonly method: string;
  readonly host: string;
  /** Without the query string (it may carry secrets). */
  readonly path: string;
  readonly userAgent: string;
  readonly action: ReportAction;
  /** `monitor` when the request was let through only because of monitor mode (rule or global). */
  readonly mode: 'enforce' | 'monitor';
  readonly outcome: Outcome;
  readonly ruleId: string | null;
  readonly category: DecisionCategory | null;
  /** A monitor-mode rule that matched but did not decide. */
  readonly monitoredRuleId: string | null;
  readonly snapshotVersion: number | null;
  /** True for events kept by sampling (passed or allowed requests). */
  readonly sampled: boolean;
  /**
   * The W3C `traceparent` of the request's span when the app traces it (an OpenTelemetry SDK
   * sampled it), else null: how the hub's dashboard finds the request's trace.
   */
  readonly traceparent: string | null;
}

/** What only the app knows about a request (`rampart.signal`): never sampled. */
export type SignalKind = 'login_failed' | 'login_succeeded';

export interface SignalEvent {
  readonly kind: SignalKind;
  readonly requestId: string;
  /** Epoch milliseconds. */
  readonly time: number;
  readonly ip: string;
  readonly path: string;
  readonly userAgent: string;
  /** HMAC-SHA256 of the account under the site's signal key (hex); null without one. */
  readonly account: string | null;
}

/** Distinct client addresses counted per report period at most; further new ones are not. */
export const MAX_COUNTED_ADDRESSES = 5000;

export interface CountEntry {
  readonly action: ReportAction;
  readonly mode: 'enforce' | 'monitor';
  readonly ruleId: string | null;
  readonly outcome: Outcome;
  count: number;
}

export class ReportQueue {
  private readonly ring: (ReportEvent | undefined)[];
  private head = 0;
  private length = 0;
  /**
   * Counters by (action, mode, outcome) then rule id: constant keys and a rule id the decision
   * already holds, so counting a request builds no string.
   */
  private counts = new Map<string, Map<string | null, CountEntry>>();
  /**
   * The entry counted last. Most requests in a row share one (a plain pass), and comparing four
   * interned values costs less than two map lookups that other requests have pushed out of the
   * CPU cache.
   */
  private lastEntry: CountEntry | null = null;
  private countEntries = 0;
  /** Events dropped since the last batch was taken (reported in the batch). */
  droppedSinceBatch = 0;
  periodStart = Date.now();
  private signals: SignalEvent[] = [];
  /** Requests per client address since the last batch (what request-rate detection reads). */
  private addresses = new Map<string, number>();

  constructor(readonly capacity: number) {
    this.ring = new Array(capacity);
  }

  get signalCount(): number {
    return this.signals.length;
  }

  /** Queues a signal; false (dropped, counted by the caller) when `capacity` are waiting. */
  pushSignal(signal: SignalEvent): boolean {
    if (this.signals.length >= this.capacity) return false;
    this.signals.push(signal);
    return true;
  }

  /** Removes and returns up to `max` of the oldest signals. */
  takeSignals(max: number): SignalEvent[] {
    return this.signals.splice(0, max);
  }

  /** Counts one request of `ip` (bounded: see {@link MAX_COUNTED_ADDRESSES}). */
  countAddress(ip: string): void {
    if (ip === '') return;
    const n = this.addresses.get(ip);
    if (n !== undefined) this.addresses.set(ip, n + 1);
    else if (this.addresses.size < MAX_COUNTED_ADDRESSES) this.addresses.set(ip, 1);
  }

  /** Removes and returns the requests per address counted since the last call. */
  takeAddressCounts(): { ip: string; count: number }[] {
    const out = [...this.addresses].map(([ip, count]) => ({ ip, count }));
    this.addresses = new Map();
    return out;
  }

  get size(): number {
    return this.length;
  }

  get hasCounts(): boolean {
    return this.countEntries > 0;
  }

  /** Adds `n` requests to the counts. */
  count(
    action: ReportAction,
    mode: 'enforce' | 'monitor',
    ruleId: string | null,
    outcome: Outcome,
    n = 1,
  ): void {
    const last = this.lastEntry;
    if (
      last !== null &&
      last.ruleId === ruleId &&
      last.action === action &&
      last.outcome === outcome &&
      last.mode === mode
    ) {
      last.count += n;
      return;
    }
    const group = GROUP_KEYS[action][mode][outcome];
    let byRule = this.counts.get(group);
    if (byRule === undefined) {
      byRule = new Map();
      this.counts.set(group, byRule);
    }
    let entry = byRule.get(ruleId);
    if (entry) entry.count += n;
    else {
      entry = { action, mode, ruleId, outcome, count: n };
      byRule.set(ruleId, entry);
      this.countEntries++;
    }
    this.lastEntry = entry;
  }

  /** Appends an event; false (and counted by the caller as dropped) when the queue is full. */
  push(event: ReportEvent): boolean {
    if (this.length === this.capacity) {
      this.droppedSinceBatch++;
      return false;
    }
    this.ring[(this.head + this.length) % this.capacity] = event;
    this.length++;
    return true;
  }

  /** Removes and returns up to `max` of the oldest events. */
  take(max: number): ReportEvent[] {
    const n = Math.min(max, this.length);
    const out: ReportEvent[] = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.ring[this.head] as ReportEvent;
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
    }
    this.length -= n;
    return out;
  }

  /** Removes and returns the counts gathered since the last call. */
  takeCounts(): CountEntry[] {
    const entries: CountEntry[] = [];
    for (const byRule of this.counts.values())
      for (const entry of byRule.values()) entries.push(entry);
    this.counts = new Map();
    this.lastEntry = null;
    this.countEntries = 0;
    return entries;
  }

  /** Gives back the counts of a batch that could not be delivered. */
  mergeCounts(entries: readonly CountEntry[]): void {
    for (const e of entries) this.count(e.action, e.mode, e.ruleId, e.outcome, e.count);
  }
}

const ACTIONS: readonly ReportAction[] = ['allow', 'block', 'rate_limit', 'pass', 'unevaluated'];
const MODES = ['enforce', 'monitor'] as const;
const OUTCOMES: readonly Outcome[] = [
  'passed',
  'blocked',
  'rate_limited',
  'failed_open',
  'failed_closed',
];

/** The interned group key of every (action, mode, outcome), built once. */
const GROUP_KEYS = Object.fromEntries(
  ACTIONS.map((a) => [
    a,
    Object.fromEntries(
      MODES.map((m) => [m, Object.fromEntries(OUTCOMES.map((o) => [o, `${a}/${m}/${o}`]))]),
    ),
  ]),
) as Record<ReportAction, Record<'enforce' | 'monitor', Record<Outcome, string>>>;
