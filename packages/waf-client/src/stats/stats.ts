/**
 * Counters of one client, returned by `rampart.stats()`. Plain numbers incremented in place:
 * the request path pays an increment, nothing more.
 */
import type { DecisionAction } from '@rampart/rules-core/evaluator/decision';
import type { SnapshotOpenFailure } from '@rampart/rules-core/snapshot/reader';

export interface Stats {
  /** Requests the middleware saw (also in mode `off`). */
  requests: number;
  /** Evaluated requests by decision action (monitor-mode decisions included under their action). */
  decisions: Record<DecisionAction, number>;
  /** Decisions that would have refused the request but let it pass (monitor rule or global monitor mode). */
  monitored: number;
  /** Requests answered by the client: block response, 429, or 503 when failing closed. */
  refused: { blocked: number; rateLimited: number; failedClosed: number };
  /** Requests seen without a snapshot loaded (the fail mode applied). */
  noSnapshot: number;
  /** Failures inside the WAF (logged, throttled; the request failed open or closed as configured). */
  errors: number;
  reports: {
    /** Events accepted into the queue. */
    queued: number;
    /** Events delivered to the report URL. */
    sent: number;
    /** Signals (`rampart.signal`) queued, and delivered. */
    signals: number;
    signalsSent: number;
    /** Events lost: queue full, batch given up after retries, or reporting stopped. */
    dropped: number;
    batchesSent: number;
    batchesFailed: number;
    retries: number;
    /** Events waiting in the queue now. */
    pending: number;
    /** Set when the report URL answered 401/403/404/410: reporting stopped. */
    stoppedReason: string | null;
  };
  sync: {
    /** Polls that ended well (304, download, or reuse of a file another process downloaded). */
    successes: number;
    failures: number;
    /** Snapshots downloaded by this process, whole or as a page delta. */
    downloads: number;
    /** Bytes received for them over the wire (compressed, where the hub compressed them). */
    bytesDownloaded: number;
    /** Downloads rebuilt from a page delta against the snapshot in use. */
    deltaDownloads: number;
    /** Deltas offered but not used (malformed, for another base, failed): the whole file came. */
    deltaFailures: number;
    /**
     * How the client polls: `blocking` (the hub holds each poll until it publishes), `interval`
     * (every `syncIntervalMs`: configured so, or the hub or a proxy in between did not hold).
     */
    pollMode: 'blocking' | 'interval';
    /** Blocking polls the hub answered at once because it held too many (`busy`). */
    busyPolls: number;
    /** Snapshots another process of the host had already downloaded. */
    reused: number;
    /** Downloads refused by `openSnapshot`, by reason. */
    rejected: Record<SnapshotOpenFailure, number>;
    /** True once the hub refused the site key (sync stopped). */
    unauthorized: boolean;
    /** True when the snapshot in use at start came from the data directory. */
    loadedFromDisk: boolean;
    lastSuccessAt: number | null;
    lastError: string | null;
    /** Duration of the synchronous part of the last swap (building the evaluator), ms. */
    lastSwapMs: number;
    /**
     * When the work that brought the snapshot in use began (the poll that found it, or the
     * start-up read of the data directory), epoch ms; null before the first swap. With
     * `lastSwapAt` it bounds the swap in time, e.g. to find the event-loop stalls it overlapped.
     */
    lastSwapStartedAt: number | null;
    /** When the snapshot in use was swapped in, epoch ms; null before the first swap. */
    lastSwapAt: number | null;
  };
  rateLimits: {
    /** Keys held by the per-process limiter now, and keys evicted to stay within capacity. */
    keys: number;
    evictions: number;
    /** Live instances of the site as the hub said (1: alone, or not heard lately). */
    fleetSize: number;
  };
  /** Version of the snapshot in use, null before the first one. */
  snapshotVersion: number | null;
}

export function newStats(): Stats {
  return {
    requests: 0,
    decisions: { pass: 0, allow: 0, block: 0, rate_limit: 0 },
    monitored: 0,
    refused: { blocked: 0, rateLimited: 0, failedClosed: 0 },
    noSnapshot: 0,
    errors: 0,
    reports: {
      queued: 0,
      sent: 0,
      signals: 0,
      signalsSent: 0,
      dropped: 0,
      batchesSent: 0,
      batchesFailed: 0,
      retries: 0,
      pending: 0,
      stoppedReason: null,
    },
    sync: {
      successes: 0,
      failures: 0,
      downloads: 0,
      bytesDownloaded: 0,
      deltaDownloads: 0,
      deltaFailures: 0,
      pollMode: 'interval',
      busyPolls: 0,
      reused: 0,
      rejected: { missing: 0, not_sqlite: 0, corrupt: 0, schema_version: 0, invalid_content: 0 },
      unauthorized: false,
      loadedFromDisk: false,
      lastSuccessAt: null,
      lastError: null,
      lastSwapMs: 0,
      lastSwapStartedAt: null,
      lastSwapAt: null,
    },
    rateLimits: { keys: 0, evictions: 0, fleetSize: 1 },
    snapshotVersion: null,
  };
}
