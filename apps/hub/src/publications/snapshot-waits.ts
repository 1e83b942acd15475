/**
 * Held polls: WAF clients waiting for their site's next snapshot, in the style of Consul's
 * blocking queries.
 *
 * A held request is a promise and a timer, no thread: thousands cost a few hundred bytes each.
 * Their number is bounded (`maxHeld`); past it a hold is refused at once (`busy`) and the client
 * falls back to its own polling interval. `wake(siteId)` ends every hold of that site together,
 * when a publication is announced (by this hub or, through Redis, by another instance); a hold
 * that nothing wakes ends after its time with `timeout`. Each hold ends up to a tenth early at
 * random, so a fleet that started waiting together does not come back together.
 */
export type HoldOutcome = 'woken' | 'timeout' | 'busy' | 'closed';

export interface Hold {
  /** Settles once, with why the hold ended. */
  readonly outcome: Promise<HoldOutcome>;
  /** Ends the hold now (`closed`), e.g. when the answer turned out to be ready already. */
  cancel(): void;
}

/** The share of a wait by which a hold may end early (the jitter). */
export const HOLD_JITTER = 0.1;

interface Waiter {
  settle(outcome: HoldOutcome): void;
}

export class SnapshotWaits {
  private readonly bySite = new Map<string, Set<Waiter>>();
  private held = 0;
  private closed = false;
  /** Holds refused because `maxHeld` were held (for the metrics endpoint). */
  refused = 0;
  /** Holds ended by a publication. */
  woken = 0;

  constructor(
    private readonly maxHeld: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** How many requests are held right now. */
  get count(): number {
    return this.held;
  }

  /**
   * Holds until `wake(siteId)`, `ms` (less up to {@link HOLD_JITTER} of it), `signal` (the client
   * went away) or `cancel()`. Take the hold first, then look at the current version: a
   * publication in between then ends the hold at once instead of being missed.
   */
  hold(siteId: string, ms: number, signal?: AbortSignal): Hold {
    if (this.closed) return settled('closed');
    if (this.held >= this.maxHeld || signal?.aborted) {
      if (!signal?.aborted) this.refused++;
      return settled(signal?.aborted ? 'closed' : 'busy');
    }
    let site = this.bySite.get(siteId);
    if (!site) {
      site = new Set();
      this.bySite.set(siteId, site);
    }
    const waiters = site;
    let resolve: (outcome: HoldOutcome) => void = () => {};
    const outcome = new Promise<HoldOutcome>((r) => {
      resolve = r;
    });
    const onAbort = () => waiter.settle('closed');
    const timer = setTimeout(
      () => waiter.settle('timeout'),
      Math.max(0, Math.round(ms * (1 - HOLD_JITTER * this.random()))),
    );
    const waiter: Waiter = {
      settle: (why) => {
        if (!waiters.delete(waiter)) return;
        this.held--;
        if (waiters.size === 0 && this.bySite.get(siteId) === waiters) this.bySite.delete(siteId);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (why === 'woken') this.woken++;
        resolve(why);
      },
    };
    waiters.add(waiter);
    this.held++;
    signal?.addEventListener('abort', onAbort, { once: true });
    return { outcome, cancel: () => waiter.settle('closed') };
  }

  /** Ends every hold of `siteId` with `woken`; returns how many there were. */
  wake(siteId: string): number {
    const waiters = this.bySite.get(siteId);
    if (!waiters) return 0;
    const all = [...waiters];
    for (const waiter of all) waiter.settle('woken');
    return all.length;
  }

  /** Ends every hold (`closed`) and refuses new ones: the hub is shutting down. */
  close(): void {
    this.closed = true;
    for (const waiters of [...this.bySite.values()])
      for (const waiter of [...waiters]) waiter.settle('closed');
  }
}

function settled(outcome: HoldOutcome): Hold {
  return { outcome: Promise.resolve(outcome), cancel: () => {} };
}
