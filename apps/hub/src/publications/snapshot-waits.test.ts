import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOLD_JITTER, SnapshotWaits } from './snapshot-waits.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('SnapshotWaits (held polls)', () => {
  it('wakes every hold of a site together, and only that site', async () => {
    const waits = new SnapshotWaits(10);
    const a1 = waits.hold('a', 60_000);
    const a2 = waits.hold('a', 60_000);
    const b = waits.hold('b', 60_000);
    expect(waits.count).toBe(3);
    expect(waits.wake('a')).toBe(2);
    expect(await a1.outcome).toBe('woken');
    expect(await a2.outcome).toBe('woken');
    expect(waits.count).toBe(1);
    b.cancel();
    expect(await b.outcome).toBe('closed');
    expect(waits.count).toBe(0);
    expect(waits.wake('a')).toBe(0);
  });

  it('ends a hold after its wait, less a random part of up to a tenth (the jitter)', async () => {
    vi.useFakeTimers();
    const early = new SnapshotWaits(10, () => 1).hold('a', 10_000);
    const late = new SnapshotWaits(10, () => 0).hold('a', 10_000);
    let earlyDone = false;
    void early.outcome.then(() => {
      earlyDone = true;
    });
    await vi.advanceTimersByTimeAsync(10_000 * (1 - HOLD_JITTER) - 1);
    expect(earlyDone).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await early.outcome).toBe('timeout');
    await vi.advanceTimersByTimeAsync(10_000 * HOLD_JITTER);
    expect(await late.outcome).toBe('timeout');
  });

  it('refuses holds past its bound at once, and counts them', async () => {
    const waits = new SnapshotWaits(2);
    waits.hold('a', 60_000);
    waits.hold('b', 60_000);
    expect(await waits.hold('c', 60_000).outcome).toBe('busy');
    expect(waits.refused).toBe(1);
    expect(waits.count).toBe(2);
    waits.close();
  });

  it('lets go of a hold whose client went away', async () => {
    const waits = new SnapshotWaits(10);
    const gone = new AbortController();
    const hold = waits.hold('a', 60_000, gone.signal);
    gone.abort();
    expect(await hold.outcome).toBe('closed');
    expect(waits.count).toBe(0);
    expect(await waits.hold('a', 60_000, gone.signal).outcome).toBe('closed');
    expect(waits.refused).toBe(0);
  });

  it('ends every hold and refuses new ones once closed', async () => {
    const waits = new SnapshotWaits(10);
    const held = waits.hold('a', 60_000);
    waits.close();
    expect(await held.outcome).toBe('closed');
    expect(await waits.hold('a', 60_000).outcome).toBe('closed');
    expect(waits.count).toBe(0);
  });
});
