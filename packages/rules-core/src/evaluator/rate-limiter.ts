/**
 * Rate-limit counters for the evaluator.
 *
 * The anchor kept a map of every IP and scanned it on each limited request (WAF-SPEC defect 11).
 * This limiter does O(1) work per hit and holds at most `capacity` keys whatever the traffic: a
 * flood of rotating source addresses evicts keys that have not been hit recently instead of
 * growing memory. The window is the sliding-window approximation (the previous fixed window's
 * count weighted by how much of it still overlaps the sliding window), which needs two numbers
 * per key.
 *
 * ## Layout, and why
 *
 * A hit is on every request's path, and under load the limiter's memory is cold by the time the
 * same key comes back, so what matters is how many scattered objects a hit touches:
 *
 * - Counters are grouped by **series** (one rule and window), resolved once when an evaluator is
 *   built: the hot path looks the client's key up in its series' own map, so no per-request key
 *   string is concatenated and hashed.
 * - A hit is one `Map.get` and a few field writes. Recency is a bit on the counter (the CLOCK
 *   approximation of least-recently-used): the map is never reordered on a hit.
 * - Eviction walks one ring of all counters with a hand: a counter hit again since it was created
 *   or since the hand last passed gets a second chance, the first one that was not is evicted and
 *   its object reused for the new key. A key starts without that chance, so a flood of addresses
 *   seen once each evicts its own kind before any key that keeps coming back (a legitimate user,
 *   or the attacker's own address being counted towards its limit). Amortised O(1); the ring
 *   never holds more than `capacity` counters.
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

/** The counters of one rule and window. */
export interface RateLimitSeries {
  /** Counts one hit for `key` and says whether it is over `limit` per the series' window. */
  hit(key: string, limit: number, now: number): RateLimitState;
}

export interface RateLimiter {
  /**
   * The series of `ruleId` with `windowMs`: called when an evaluator is built, not per request.
   * The same arguments give the same series, so counts follow a rule across snapshots, and a
   * changed window starts afresh.
   */
  series(ruleId: string, windowMs: number): RateLimitSeries;
}

export interface SlidingWindowLimiterOptions {
  /** Most keys held at once, over all series (default 100 000). */
  readonly capacity?: number;
}

interface Counter {
  series: CounterSeries;
  key: string;
  windowStart: number;
  current: number;
  previous: number;
  /** Hit again since created or since the eviction hand last passed (CLOCK's reference bit). */
  recent: boolean;
}

/** The default in-memory limiter (see the module comment). */
export class SlidingWindowLimiter implements RateLimiter {
  private readonly capacity: number;
  private readonly seriesById = new Map<string, CounterSeries>();
  /** Every live counter, in the order the eviction hand visits them. */
  private readonly ring: Counter[] = [];
  private hand = 0;
  /** Keys evicted to stay within capacity (a sign the capacity is too small for the traffic). */
  evictions = 0;

  constructor(options: SlidingWindowLimiterOptions = {}) {
    this.capacity = options.capacity ?? 100_000;
    if (!Number.isInteger(this.capacity) || this.capacity < 1)
      throw new RangeError('capacity must be a positive integer');
  }

  /** Keys held, over all series. */
  get size(): number {
    return this.ring.length;
  }

  series(ruleId: string, windowMs: number): RateLimitSeries {
    if (!(windowMs > 0)) throw new RangeError('windowMs must be positive');
    const id = `${ruleId}\u0000${windowMs}`;
    let series = this.seriesById.get(id);
    if (series === undefined) {
      series = new CounterSeries(this, windowMs);
      this.seriesById.set(id, series);
    }
    return series;
  }

  /** A counter for a key new to `series`: a fresh one while below capacity, else an evicted one. */
  counterFor(series: CounterSeries, key: string, windowStart: number): Counter {
    if (this.ring.length < this.capacity) {
      const counter: Counter = {
        series,
        key,
        windowStart,
        current: 0,
        previous: 0,
        recent: false,
      };
      this.ring.push(counter);
      return counter;
    }
    const ring = this.ring;
    let victim = ring[this.hand] as Counter;
    while (victim.recent) {
      victim.recent = false;
      this.hand = this.hand + 1 === ring.length ? 0 : this.hand + 1;
      victim = ring[this.hand] as Counter;
    }
    this.hand = this.hand + 1 === ring.length ? 0 : this.hand + 1;
    victim.series.forget(victim.key);
    this.evictions++;
    victim.series = series;
    victim.key = key;
    victim.windowStart = windowStart;
    victim.current = 0;
    victim.previous = 0;
    victim.recent = false;
    return victim;
  }
}

class CounterSeries implements RateLimitSeries {
  private readonly counters = new Map<string, Counter>();

  constructor(
    private readonly owner: SlidingWindowLimiter,
    private readonly windowMs: number,
  ) {}

  hit(key: string, limit: number, now: number): RateLimitState {
    const windowMs = this.windowMs;
    const windowStart = now - (now % windowMs);
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = this.owner.counterFor(this, key, windowStart);
      this.counters.set(key, counter);
    } else {
      counter.recent = true;
      if (counter.windowStart !== windowStart) {
        counter.previous = counter.windowStart === windowStart - windowMs ? counter.current : 0;
        counter.current = 0;
        counter.windowStart = windowStart;
      }
    }
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

  /** Drops an evicted key (its counter object is being reused for another key). */
  forget(key: string): void {
    this.counters.delete(key);
  }
}
