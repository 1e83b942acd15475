import { describe, expect, it } from 'vitest';
import {
  longestStallOverStretch,
  longestStallWithin,
  type Stall,
  StallRecorder,
} from './stall-recorder.ts';

function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else may run
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('StallRecorder', () => {
  // A loaded machine can add stalls of its own at any time, so the tests look for the stall they
  // made by its time, and never assert that no other stall happened.
  it('records a blocked event loop with the time it ran again', async () => {
    const recorder = new StallRecorder(5);
    recorder.start();
    await tick();
    const before = Date.now();
    blockFor(40);
    const after = Date.now();
    await tick();
    const { stalls, truncated } = recorder.stop();
    expect(truncated).toBe(false);
    // The stall that covers the busy stretch (clocks: performance.timeOrigin against Date.now()).
    const covering = stalls.filter((s) => s.endedAt - s.ms <= before + 2 && s.endedAt >= after - 2);
    expect(covering).toHaveLength(1);
    expect((covering[0] as Stall).ms).toBeGreaterThanOrEqual(40);
  });

  it('starts afresh on start() and stops recording on stop()', async () => {
    const recorder = new StallRecorder(5);
    recorder.start();
    await tick();
    blockFor(20);
    await tick();
    recorder.start();
    const restartedAt = performance.timeOrigin + performance.now();
    await tick();
    // Nothing from before the restart: every stall began after it.
    for (const stall of recorder.stop().stalls)
      expect(stall.endedAt - stall.ms).toBeGreaterThanOrEqual(restartedAt - 1);
    blockFor(20);
    await tick();
    expect(recorder.stop()).toEqual({ stalls: [], truncated: false });
  });

  it('keeps at most its capacity and says so', async () => {
    const recorder = new StallRecorder(2, 2);
    recorder.start();
    for (let i = 0; i < 4; i++) {
      await tick();
      blockFor(10);
    }
    const { stalls, truncated } = recorder.stop();
    expect(stalls).toHaveLength(2);
    expect(truncated).toBe(true);
  });
});

describe('longestStallWithin', () => {
  const stalls: Stall[] = [
    { endedAt: 1000, ms: 30 }, // [970, 1000]
    { endedAt: 2000, ms: 5 }, // [1995, 2000]
    { endedAt: 3000, ms: 50 }, // [2950, 3000]
  ];

  it('takes stalls that overlap the interval, even in part', () => {
    expect(longestStallWithin(stalls, 990, 2500)).toBe(30); // the first ends inside
    expect(longestStallWithin(stalls, 1500, 2960)).toBe(50); // the last starts inside
    expect(longestStallWithin(stalls, 1996, 1997)).toBe(5); // the interval inside a stall
  });

  it('is 0 when no stall overlaps, or there are none', () => {
    expect(longestStallWithin(stalls, 1001, 1994)).toBe(0);
    expect(longestStallWithin([], 0, 10_000)).toBe(0);
  });
});

describe('longestStallOverStretch', () => {
  const swap = { startedAt: 20_000, stalls: [{ endedAt: 22_500, ms: 12 }] };
  const baseline = {
    startedAt: 10_000,
    stalls: [
      { endedAt: 12_500, ms: 30 }, // 2.5 s in: inside the same stretch
      { endedAt: 17_000, ms: 90 }, // 7 s in: outside it
    ],
  };

  it('measures a stretch in its own window', () => {
    expect(longestStallOverStretch(swap, swap, 22_000, 23_000)).toBe(12);
  });

  it('measures the same offsets into another window', () => {
    expect(longestStallOverStretch(baseline, swap, 22_000, 23_000)).toBe(30);
    expect(longestStallOverStretch(baseline, swap, 26_000, 26_500)).toBe(0);
  });
});
