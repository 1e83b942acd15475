/**
 * Measures how long the event loop is blocked at a time while something loads.
 *
 * A 1 ms interval timer notes the time of each of its ticks; the longest gap between two ticks
 * (or between the last tick and `stop()`) is the longest time nothing else could have run, i.e.
 * the worst latency a concurrent request would have suffered. The figure includes up to about
 * 1 ms of timer granularity, so it errs on the high side.
 */
import { performance } from 'node:perf_hooks';

export interface StallMonitor {
  /** Stops the timer and returns the longest gap seen, in milliseconds. */
  stop(): number;
}

/** Starts measuring now; call `stop()` once the work being measured has finished. */
export function startStallMonitor(): StallMonitor {
  let last = performance.now();
  let maxGap = 0;
  const note = () => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  };
  const timer = setInterval(note, 1);
  return {
    stop() {
      note();
      clearInterval(timer);
      return maxGap;
    },
  };
}
