/**
 * Records event-loop stalls with the time each one ended, so that a stall can be matched to what
 * was happening then (the benchmark asks which stalls overlapped a snapshot swap, and which
 * overlapped the same stretch of a window without one).
 *
 * A histogram such as `monitorEventLoopDelay` only gives the longest stall of a whole window: on
 * a shared machine that is often a garbage collection or the host pausing the VM, seconds away
 * from the swap it is meant to judge. Here a 1 ms interval timer notes each of its ticks; a gap
 * between two ticks longer than `thresholdMs` is recorded with its end time. A gap includes up
 * to about 1 ms of timer granularity, so figures err on the high side.
 */
import { performance } from 'node:perf_hooks';

export interface Stall {
  /** When the event loop ran again, epoch ms (fractional). */
  readonly endedAt: number;
  /** How long nothing else could run, ms. */
  readonly ms: number;
}

export interface StallRecording {
  readonly stalls: readonly Stall[];
  /** True when more than `capacity` stalls happened: the later ones are missing. */
  readonly truncated: boolean;
}

export class StallRecorder {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private stalls: Stall[] = [];
  private truncated = false;
  private readonly thresholdMs: number;
  private readonly capacity: number;

  constructor(thresholdMs = 2, capacity = 50_000) {
    this.thresholdMs = thresholdMs;
    this.capacity = capacity;
  }

  /** Starts a new recording (a running one is discarded). */
  start(): void {
    this.stopTimer();
    this.stalls = [];
    this.truncated = false;
    this.last = performance.now();
    this.timer = setInterval(this.tick, 1);
  }

  /** Ends the recording and returns it (an empty one if none was running). */
  stop(): StallRecording {
    if (this.timer === undefined) return { stalls: [], truncated: false };
    this.tick();
    this.stopTimer();
    const recording = { stalls: this.stalls, truncated: this.truncated };
    this.stalls = [];
    this.truncated = false;
    return recording;
  }

  private readonly tick = (): void => {
    const now = performance.now();
    const gap = now - this.last;
    this.last = now;
    if (gap <= this.thresholdMs) return;
    if (this.stalls.length >= this.capacity) this.truncated = true;
    else this.stalls.push({ endedAt: performance.timeOrigin + now, ms: gap });
  };

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The longest of `stalls` that overlaps `[from, to]` (epoch ms), 0 when none does: a stall is
 * the interval `[endedAt - ms, endedAt]`.
 */
export function longestStallWithin(stalls: readonly Stall[], from: number, to: number): number {
  let longest = 0;
  for (const stall of stalls)
    if (stall.endedAt >= from && stall.endedAt - stall.ms <= to && stall.ms > longest)
      longest = stall.ms;
  return longest;
}

/** A recorded stretch of time: when it began (epoch ms) and its stalls. */
export interface RecordedWindow {
  readonly startedAt: number;
  readonly stalls: readonly Stall[];
}

/**
 * The longest stall of `window` over the stretch `[from, to]` (epoch ms) of `reference`, moved
 * to the same offsets into `window`. With `window` = `reference`, the stretch itself (a swap in
 * its window); with another window, the same stretch of it (a baseline window without a swap).
 */
export function longestStallOverStretch(
  window: RecordedWindow,
  reference: RecordedWindow,
  from: number,
  to: number,
): number {
  const shift = window.startedAt - reference.startedAt;
  return longestStallWithin(window.stalls, from + shift, to + shift);
}
