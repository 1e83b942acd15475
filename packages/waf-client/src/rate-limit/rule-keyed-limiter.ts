/**
 * Rate-limit counters that survive snapshot swaps, and the fleet's share of each limit.
 *
 * A client swaps snapshots while it runs; with one limiter per evaluator every swap would reset
 * all counters (an attacker would get a fresh allowance on every rule change). So every
 * evaluator shares ONE {@link SlidingWindowLimiter}; the evaluator takes its counter series by
 * rule id and window, so counts follow the rule across snapshots and a change of the window
 * starts the rule's counts afresh.
 *
 * Memory is constant: the shared limiter holds at most `capacity` keys and evicts the least
 * recently hit (CLOCK: a flood of rotating source addresses seen once each evicts its own kind
 * before keys that keep coming back; it cannot grow memory).
 * About 200 bytes per key (the key string, a small counter object and a Map entry), so the
 * default 100 000 keys is ~20 MB. A key evicted while still active restarts from zero: size the
 * capacity above the number of distinct keys expected within one window.
 *
 * **Fleet-wide limits.** A rule's `limit` is the budget of the whole fleet: the hub tells each
 * client how many live instances the site has (`fleetSize`, with every poll), and each enforces
 * its share, `ceil(limit / fleetSize)`, so N instances behind a balancer admit about `limit`, not
 * N x `limit`. A client alone, or one that has not heard from the hub for a while, enforces the
 * whole limit (`fleetSize` 1). The hits per (rule, key) since the last report batch go to the hub
 * too (`takeKeyCounts`), which sums them over the fleet and blocks a key over the budget.
 */
import type {
  RateLimiter,
  RateLimitSeries,
  RateLimitState,
} from '@rampart/rules-core/evaluator/rate-limiter';
import { SlidingWindowLimiter } from '@rampart/rules-core/evaluator/rate-limiter';

/**
 * How long a fleet size the hub told is believed. A blocking poll is answered at least every 30 s
 * by default, so three missed answers mean the client is cut off: it then enforces whole limits.
 */
export const FLEET_SIZE_TRUST_MS = 90_000;

/** Hits per (rule, key) a report period keeps at most; further new keys are not reported. */
export const MAX_REPORTED_KEYS = 10_000;

/** What one instance of `fleetSize` enforces of a fleet-wide `limit`. */
export function shareOf(limit: number, fleetSize: number): number {
  return Math.max(1, Math.ceil(limit / Math.max(1, fleetSize)));
}

export interface KeyCount {
  readonly ruleId: string;
  readonly key: string;
  readonly count: number;
}

export class SharedRateLimits {
  readonly limiter: SlidingWindowLimiter;
  private fleet = 1;
  private fleetHeardAt = Number.NEGATIVE_INFINITY;
  /** Hits per rule, then key, since the last `takeKeyCounts`. */
  private hits = new Map<string, Map<string, number>>();
  private reportedKeys = 0;
  private readonly evaluatorView: RateLimiter;

  constructor(capacity: number) {
    this.limiter = new SlidingWindowLimiter({ capacity });
    this.evaluatorView = { series: (ruleId, windowMs) => this.series(ruleId, windowMs) };
  }

  /**
   * Records the live instances the hub counted (null: it did not say, as an older hub; then the
   * whole limit applies). Called with every sync answer.
   */
  heardFleetSize(size: number | null, now = Date.now()): void {
    this.fleet = size !== null && Number.isSafeInteger(size) && size >= 1 ? size : 1;
    this.fleetHeardAt = now;
  }

  /** The fleet size in force at `now`: the hub's, or 1 when it has not spoken for a while. */
  fleetSizeAt(now: number): number {
    return now - this.fleetHeardAt <= FLEET_SIZE_TRUST_MS ? this.fleet : 1;
  }

  /** The limiter every evaluator uses (the same one, whatever its snapshot). */
  forEvaluator(): RateLimiter {
    return this.evaluatorView;
  }

  /** The hits counted since the last call, for the next report batch. */
  takeKeyCounts(): KeyCount[] {
    const out: KeyCount[] = [];
    for (const [ruleId, keys] of this.hits)
      for (const [key, count] of keys) out.push({ ruleId, key, count });
    this.hits = new Map();
    this.reportedKeys = 0;
    return out;
  }

  private series(ruleId: string, windowMs: number): RateLimitSeries {
    const inner = this.limiter.series(ruleId, windowMs);
    return {
      hit: (key: string, limit: number, now: number): RateLimitState => {
        this.note(ruleId, key);
        return inner.hit(key, shareOf(limit, this.fleetSizeAt(now)), now);
      },
    };
  }

  private note(ruleId: string, key: string): void {
    let keys = this.hits.get(ruleId);
    if (keys === undefined) {
      keys = new Map();
      this.hits.set(ruleId, keys);
    }
    const count = keys.get(key);
    if (count !== undefined) keys.set(key, count + 1);
    else if (this.reportedKeys < MAX_REPORTED_KEYS) {
      keys.set(key, 1);
      this.reportedKeys++;
    }
  }
}
