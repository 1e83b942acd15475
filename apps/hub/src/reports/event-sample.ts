/**
 * Which raw events are written to `report_events`: at most `perSecond` per site and second of
 * event time, the first that arrive; the others are counted (per-minute counters, top lists) but
 * not kept.
 *
 * Why at ingestion and not only by the retention job: the raw events are a sample for looking at
 * (the dashboard's event list, a rule's recent hits); under an attack of tens of thousands of
 * requests a second, writing every event only for the retention job to delete nearly all of them
 * within a minute was most of ingestion's cost (an insert into a 21-column table and its index
 * per event, against a handful of counter upserts per distinct value). A budget per second keeps
 * the sample spread over the whole attack rather than its first seconds.
 *
 * The budget is per writer (one per hub instance), in memory: with several hub instances a site
 * keeps up to that many times the budget, and a restart starts afresh. Memory is bounded: the
 * seconds used are kept in two generations that rotate every {@link GENERATION_MS} of wall time,
 * so a second is remembered from its last kept event for at least that long and at most twice
 * that (a batch retried later than that may add one more second's budget).
 */

const GENERATION_MS = 60_000;

export class EventSample {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private rotatedAt: number;

  /**
   * @param perSecond events kept per site and second; 0 keeps none.
   * @param now the wall clock, in milliseconds (tests pass their own).
   */
  constructor(
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.rotatedAt = now();
  }

  /** Whether the event of `siteId` at `time` (UTC ISO 8601, as parsed) is kept; counts it if so. */
  keep(siteId: string, time: string): boolean {
    const key = `${siteId}\u0000${time.slice(0, 19)}`;
    const used = this.current.get(key) ?? this.previous.get(key) ?? 0;
    if (used >= this.perSecond) return false;
    this.current.set(key, used + 1);
    return true;
  }

  /** Forgets the seconds of two generations ago; call once per group written. */
  rotate(): void {
    const now = this.now();
    if (now - this.rotatedAt < GENERATION_MS) return;
    this.previous = now - this.rotatedAt < 2 * GENERATION_MS ? this.current : new Map();
    this.current = new Map();
    this.rotatedAt = now;
  }
}
