/**
 * Slows down clients that keep presenting bad credentials.
 *
 * Per client address, failures within a window are counted; past a free allowance each further
 * failure waits exponentially longer before its 401 goes out (capped), which makes guessing keys
 * slow without locking out a legitimate client for long. The map is bounded: the least recently
 * failing addresses are forgotten first, so a flood of addresses cannot exhaust memory.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';

interface FailureRecord {
  count: number;
  windowStart: number;
}

export interface FailureLimiterOptions {
  readonly freeFailures: number;
  readonly windowMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly capacity: number;
}

export const DEFAULT_FAILURE_LIMITS: FailureLimiterOptions = {
  freeFailures: 5,
  windowMs: 60_000,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  capacity: 50_000,
};

@Injectable()
export class FailureLimiter {
  private readonly failures = new Map<string, FailureRecord>();
  private readonly options: FailureLimiterOptions = DEFAULT_FAILURE_LIMITS;

  /** Records a failure from `address` and returns how long to wait before answering. */
  recordFailure(address: string, now = Date.now()): number {
    let record = this.failures.get(address);
    if (!record || now - record.windowStart > this.options.windowMs) {
      record = { count: 0, windowStart: now };
    }
    this.failures.delete(address); // re-inserted: Map order is recency order
    if (this.failures.size >= this.options.capacity) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    record.count++;
    this.failures.set(address, record);
    return delayFor(record.count, this.options);
  }

  /** Waits the delay a failure earned. */
  async penalize(address: string): Promise<void> {
    const delay = this.recordFailure(address);
    if (delay > 0) await sleep(delay);
  }
}

/** The wait after the `count`-th failure in a window. */
export function delayFor(count: number, o: FailureLimiterOptions): number {
  const excess = count - o.freeFailures;
  if (excess <= 0) return 0;
  return Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (excess - 1));
}
