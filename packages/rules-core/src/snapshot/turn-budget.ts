/**
 * Cooperative slicing of long synchronous work, so a server loading a snapshot keeps answering
 * requests: the loader calls `pause()` between small steps and yields to the event loop once a
 * time slice is used up. Slicing by time rather than by step count adapts to cold code (the
 * first pass through a loop runs in the interpreter, many times slower than later ones).
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

export class TurnBudget {
  private sliceStart = performance.now();

  /** @param sliceMs the longest the caller may run between two turns of the event loop */
  constructor(private readonly sliceMs = 3) {}

  /** Yields to the event loop if this slice is used up. */
  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return;
    await nextTurn();
    this.sliceStart = performance.now();
  }

  /** Always yields (before work whose duration cannot be bounded, e.g. one large SQL read). */
  async yield(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
