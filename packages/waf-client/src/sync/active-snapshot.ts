/**
 * The snapshot and evaluator in use, swapped by replacing one reference.
 *
 * A new snapshot is opened and verified completely beforehand (`openSnapshot` slices its work
 * across event-loop turns), then its {@link Evaluator} is built and the reference replaced in
 * one synchronous step: a request sees the old evaluator or the new one, never a mix, and never
 * waits. Evaluations are synchronous, so once the swap has happened no evaluation can still be
 * running on the old snapshot; it is closed on the next turn of the event loop.
 */
import { performance } from 'node:perf_hooks';
import { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import type { Snapshot } from '@rampart/rules-core/snapshot/reader';
import type { SharedRateLimits } from '../rate-limit/rule-keyed-limiter.js';

export interface InstalledSnapshot {
  readonly evaluator: Evaluator;
  readonly snapshot: Snapshot;
  readonly sha256: string;
  readonly version: number;
}

export class ActiveSnapshot {
  /** What requests are evaluated with; null until the first snapshot is installed. */
  current: InstalledSnapshot | null = null;
  /** How long the last evaluator build (the only synchronous part of a swap) took, in ms. */
  lastSwapMs = 0;
  private closed = false;
  private readonly listeners = new Set<(installed: InstalledSnapshot) => void>();

  constructor(
    private readonly limits: SharedRateLimits,
    private readonly memos: { readonly addressMemo: number; readonly fieldMemo: number },
  ) {}

  /** Builds the evaluator for an opened, verified snapshot and makes it current. */
  install(snapshot: Snapshot, sha256: string): InstalledSnapshot {
    if (this.closed) {
      snapshot.close();
      throw new Error('the client is closed');
    }
    const started = performance.now();
    const evaluator = new Evaluator(snapshot, {
      rateLimiter: this.limits.forEvaluator(),
      addressMemo: this.memos.addressMemo,
      fieldMemo: this.memos.fieldMemo,
    });
    const installed: InstalledSnapshot = { evaluator, snapshot, sha256, version: snapshot.version };
    const previous = this.current;
    this.current = installed;
    this.lastSwapMs = performance.now() - started;
    if (previous) setImmediate(() => previous.snapshot.close());
    for (const listener of this.listeners) listener(installed);
    return installed;
  }

  /**
   * Calls `listener` with each snapshot made current from now on (and with the current one at
   * once, if any), synchronously in the swap's turn, before the old one is closed. Returns the
   * function that removes it. A listener that throws does not stop the swap or the others.
   */
  subscribe(listener: (installed: InstalledSnapshot) => void): () => void {
    const safe = (installed: InstalledSnapshot) => {
      try {
        listener(installed);
      } catch {
        // The listener's own failure; the swap is done and other listeners still run.
      }
    };
    this.listeners.add(safe);
    if (this.current) safe(this.current);
    return () => {
      this.listeners.delete(safe);
    };
  }

  close(): void {
    this.closed = true;
    const previous = this.current;
    this.current = null;
    previous?.snapshot.close();
  }
}
