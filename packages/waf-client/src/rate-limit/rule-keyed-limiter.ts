/**
 * Rate-limit counters that survive snapshot swaps.
 *
 * The evaluator keys counters by the rule's position in its snapshot (`<position>\0<key>`). A
 * client swaps snapshots while it runs; with one limiter per evaluator every swap would reset
 * all counters (an attacker would get a fresh allowance on every rule change), and with one
 * shared limiter keyed by position, inserting a rule would hand one rule's counts to another.
 * So every evaluator gets a thin view over ONE shared {@link SlidingWindowLimiter} that rewrites
 * the position to `<ruleId>\0<windowMs>`: counts follow the rule across snapshots, and a change
 * of the window starts the rule's counts afresh.
 *
 * Memory is constant: the shared limiter holds at most `capacity` keys and evicts the least
 * recently seen (a flood of rotating source addresses evicts idle keys, it cannot grow memory).
 * About 200 bytes per key (the key string, a small counter object and a Map entry), so the
 * default 100 000 keys is ~20 MB. A key evicted while still active restarts from zero: size the
 * capacity above the number of distinct keys expected within one window.
 *
 * Limits are per process. N processes behind a balancer admit up to N x limit per window from
 * one key (fewer when the balancer pins clients); the package README explains how to size them.
 */
import type { RateLimiter, RateLimitState } from '@rampart/rules-core/evaluator/rate-limiter';
import { SlidingWindowLimiter } from '@rampart/rules-core/evaluator/rate-limiter';
import type { Rule } from '@rampart/rules-core/rules/model';

export class SharedRateLimits {
  readonly limiter: SlidingWindowLimiter;

  constructor(capacity: number) {
    this.limiter = new SlidingWindowLimiter({ capacity });
  }

  /** A limiter for an evaluator over `rules` (the snapshot's rules in order). */
  forRules(rules: readonly Rule[]): RateLimiter {
    const ids = rules.map((rule) =>
      rule.type === 'rate_limit' ? `${rule.id}\u0000${rule.windowSeconds * 1000}` : '',
    );
    const limiter = this.limiter;
    return {
      hit(key: string, limit: number, windowMs: number, now: number): RateLimitState {
        const split = key.indexOf('\u0000');
        const ruleKey = ids[Number(key.slice(0, split))];
        return limiter.hit(ruleKey ? `${ruleKey}${key.slice(split)}` : key, limit, windowMs, now);
      },
    };
  }
}
