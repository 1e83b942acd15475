/**
 * Rate-limit counters that survive snapshot swaps.
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
 * Limits are per process. N processes behind a balancer admit up to N x limit per window from
 * one key (fewer when the balancer pins clients); the package README explains how to size them.
 */
import type { RateLimiter } from '@rampart/rules-core/evaluator/rate-limiter';
import { SlidingWindowLimiter } from '@rampart/rules-core/evaluator/rate-limiter';

export class SharedRateLimits {
  readonly limiter: SlidingWindowLimiter;

  constructor(capacity: number) {
    this.limiter = new SlidingWindowLimiter({ capacity });
  }

  /** The limiter every evaluator uses (the same one, whatever its snapshot). */
  forEvaluator(): RateLimiter {
    return this.limiter;
  }
}
