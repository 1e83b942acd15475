import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from './rate-limiter.js';

const MINUTE = 60_000;
/** A time at the start of a fixed window, so the arithmetic below reads plainly. */
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % MINUTE);

describe('SlidingWindowLimiter', () => {
  it('counts hits per key and refuses the first one over the limit', () => {
    const series = new SlidingWindowLimiter().series('login', MINUTE);
    const states = Array.from({ length: 4 }, (_, i) => series.hit('192.0.2.1', 3, T0 + i));
    expect(states.map((s) => s.limited)).toEqual([false, false, false, true]);
    expect(states.map((s) => s.remaining)).toEqual([2, 1, 0, 0]);
    expect(series.hit('192.0.2.2', 3, T0 + 5)).toMatchObject({ limited: false, remaining: 2 });
  });

  it('says when the current fixed window ends', () => {
    const series = new SlidingWindowLimiter().series('r', MINUTE);
    expect(series.hit('k', 10, T0 + 15_000).resetMs).toBe(45_000);
    expect(series.hit('k', 10, T0 + MINUTE - 1).resetMs).toBe(1);
  });

  it("weights the previous window's count by how much of it the sliding window still covers", () => {
    const series = new SlidingWindowLimiter().series('r', MINUTE);
    for (let i = 0; i < 10; i++) series.hit('k', 100, T0 + i);
    // a quarter into the next window: 10 * 0.75 + 1 = 8.5 counted, 91 left of 100
    expect(series.hit('k', 100, T0 + MINUTE + 15_000).remaining).toBe(91);
    // two windows later nothing of the first is left
    expect(series.hit('k', 100, T0 + 3 * MINUTE).remaining).toBe(99);
  });

  it('refuses a key over the limit until enough of the window has slid past', () => {
    const series = new SlidingWindowLimiter().series('r', MINUTE);
    for (let i = 0; i < 5; i++) series.hit('k', 4, T0 + i);
    expect(series.hit('k', 4, T0 + MINUTE + 1_000).limited).toBe(true); // 6*0.98 + 1 > 4
    expect(series.hit('k', 4, T0 + MINUTE + 50_000).limited).toBe(false);
  });

  it('gives the same series for the same rule and window, and separate counts otherwise', () => {
    const limiter = new SlidingWindowLimiter();
    limiter.series('login', MINUTE).hit('k', 1, T0);
    expect(limiter.series('login', MINUTE).hit('k', 1, T0).limited).toBe(true);
    expect(limiter.series('login', 2 * MINUTE).hit('k', 1, T0).limited).toBe(false);
    expect(limiter.series('signup', MINUTE).hit('k', 1, T0).limited).toBe(false);
    expect(limiter.size).toBe(3);
  });

  it('keeps rule ids that contain the separator apart', () => {
    const limiter = new SlidingWindowLimiter();
    limiter.series('a\u00001', 2).hit('k', 1, T0);
    expect(limiter.series('a', 12).hit('k', 1, T0).limited).toBe(false);
  });

  it('holds at most `capacity` keys over all series, counting evictions', () => {
    const limiter = new SlidingWindowLimiter({ capacity: 100 });
    const a = limiter.series('a', MINUTE);
    const b = limiter.series('b', MINUTE);
    for (let i = 0; i < 10_000; i++) (i % 2 ? a : b).hit(`10.0.${i >> 8}.${i & 255}`, 5, T0);
    expect(limiter.size).toBe(100);
    expect(limiter.evictions).toBe(9_900);
  });

  it('keeps a key that keeps coming back through a flood of addresses seen once', () => {
    const limiter = new SlidingWindowLimiter({ capacity: 50 });
    const series = limiter.series('login', MINUTE);
    let limited = false;
    for (let i = 0; i < 5_000 && !limited; i++) {
      series.hit(`198.51.${i >> 8}.${i & 255}`, 1000, T0 + i);
      limited = series.hit('203.0.113.7', 100, T0 + i).limited;
    }
    // counted all along: the 101st hit is refused although 100 floods of 50 keys went by
    expect(limited).toBe(true);
    expect(limiter.size).toBe(50);
  });

  it('restarts an evicted key from zero', () => {
    const limiter = new SlidingWindowLimiter({ capacity: 2 });
    const series = limiter.series('r', MINUTE);
    series.hit('x', 1, T0);
    series.hit('y', 1, T0);
    series.hit('z', 1, T0); // evicts x, which was hit only once
    expect(series.hit('x', 1, T0).limited).toBe(false);
  });

  it('rejects a capacity or window that is not positive', () => {
    expect(() => new SlidingWindowLimiter({ capacity: 0 })).toThrow(RangeError);
    expect(() => new SlidingWindowLimiter({ capacity: 1.5 })).toThrow(RangeError);
    expect(() => new SlidingWindowLimiter().series('r', 0)).toThrow(RangeError);
  });
});
