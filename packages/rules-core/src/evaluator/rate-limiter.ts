/**
 * Rate-limit counters for the evaluator.
 *
 * The anchor kept a map of every IP and scanned it on each limited request (WAF-SPEC defect 11).
 * This limiter does O(1) work per hit and holds at most `capacity` keys whatever the traffic:
 * a flood of rotating source addresses evicts the least recently seen keys instead of growing
 * memory. The window is the sliding-window approximation (the previous fixed window's count
 * weighted by how much of it still overlaps the sliding window), which needs two numbers per key.
 *
 * Counters are per process. A fleet of N processes behind a balancer admits up to N x limit per
 * window from one key; size `limit` per process accordingly (the waf-client README explains).
 */

export interface RateLimitState {
  /** True when this hit exceeds the limit. */
  readonly limited: boolean;
  /** Hits left in the current window after this one (0 when limited). */
  readonly remaining: number;
  /** Milliseconds until the current fixed window ends (when the count starts to decay). */
  readonly resetMs: number;
}

export interface RateLimiter {
  /** Counts one hit for `key` and says whether it is over `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs: number, now: number): RateLimitState;
}

interface Counter {
  windowStart: number;
  current: number;
  previous: number;
}

export interface SlidingWindowLimiterOptions {
  /** Most keys held at once; the least recently used are evicted beyond it (default 100 000). */
  readonly capacity?: number;
}

/** The default in-memory limiter (see the module comment). */
export class SlidingWindowLimiter implements RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly capacity: number;
  /** Keys evicted to stay within capacity (a sign the capacity is too small for the traffic). */
  evictions = 0;

  constructor(options: SlidingWindowLimiterOptions = {}) {
    this.capacity = options.capacity ?? 100_000;
    if (!Number.isInteger(this.capacity) || this.capacity < 1)
      throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.counters.size;
  }

  hit(key: string, limit: number, windowMs: number, now: number): RateLimitState {
    const windowStart = now - (now % windowMs);
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = { windowStart, current: 0, previous: 0 };
      this.evictIfFull();
    } else {
      this.counters.delete(key); // re-inserted below: Map order is recency order
      if (counter.windowStart !== windowStart) {
        counter.previous = counter.windowStart === windowStart - windowMs ? counter.current : 0;
        counter.current = 0;
        counter.windowStart = windowStart;
      }
    }
    this.counters.set(key, counter);
    counter.current++;
    const overlap = 1 - (now - windowStart) / windowMs;
    const estimate = counter.previous * overlap + counter.current;
    const limited = estimate > limit;
    return {
      limited,
      remaining: limited ? 0 : Math.max(0, Math.floor(limit - estimate)),
      resetMs: windowStart + windowMs - now,
    };
  }

  private evictIfFull(): void {
    if (this.counters.size < this.capacity) return;
    const oldest = this.counters.keys().next().value;
    if (oldest !== undefined) {
      this.counters.delete(oldest);
      this.evictions++;
    }
  }
}
