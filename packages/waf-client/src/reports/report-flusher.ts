/**
 * Sends report batches in the background; never on the request path.
 *
 * - A batch is sent when `reportBatchSize` events are waiting (checked after the request that
 *   filled it, on a later turn), within {@link URGENT_FLUSH_MS} of a signal or a refusal (what
 *   the hub's detectors act on: an attack is answered in seconds, not an interval), or every
 *   `reportIntervalMs` when anything is pending (counts included). One batch is in flight at a
 *   time; while it is, events keep queueing (bounded).
 * - Body: JSON, gzip-compressed (`Content-Encoding: gzip`), `Authorization: Bearer <site key>`.
 * - Failures: network errors and 5xx/408/429 are retried up to `reportMaxAttempts` with
 *   exponential backoff and full jitter; `Retry-After` on 429/503 is honoured (capped at 5
 *   minutes). A batch that still fails is dropped and counted; its counts go back into the
 *   queue, so totals stay exact. Other 4xx (400, 413): the batch is dropped at once.
 * - 401/403/404/410: the report URL does not accept us (the hub may not implement ingestion
 *   yet). Logged once; reporting stops, everything queued and all later events are dropped and
 *   counted.
 * - `close()`: sends everything still queued, within `closeTimeoutMs`.
 *
 * Tracing: each batch is sent inside a `rampart.report.flush` root span linked to the traces
 * of its events' requests (`telemetry/waf-spans.ts`); the POST carries that span's context to
 * the hub (with an OpenTelemetry SDK in the app), whose ingestion job continues it.
 *
 * Batch format (version 1):
 * `{ version, batchId, instance, snapshotVersion, periodStart, periodEnd, passSampleRate, dropped,
 *    counts: [{action, mode, ruleId, outcome, count}], events: [...] }` with ISO times. `batchId`
 * is made once per batch and kept across its retries, so the hub counts a batch once even when
 * an answer was lost and the batch sent again.
 */
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Link } from '@opentelemetry/api';
import type { RampartConfig } from '../config/options.js';
import { describeError, type GuardedLogger } from '../logging/logger.js';
import type { KeyCount } from '../rate-limit/rule-keyed-limiter.js';
import { backoffDelay, retryAfterMs } from '../retry/backoff.js';
import type { Stats } from '../stats/stats.js';
import { inRootSpan, linkFrom, MAX_LINKS } from '../telemetry/waf-spans.js';
import type { CountEntry, ReportEvent, ReportQueue, SignalEvent } from './report-queue.js';

const gzip = promisify(gzipCallback);
/** How soon after a signal or a refusal its batch is sent (the events of that time together). */
export const URGENT_FLUSH_MS = 250;
/** Signals per batch at most (the hub takes 10 000). */
const MAX_SIGNALS_PER_BATCH = 5000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_RETRY_AFTER_MS = 5 * 60_000;

import { WAF_CLIENT_VERSION } from '../version.js';

const USER_AGENT = `rampart-waf-client/${WAF_CLIENT_VERSION}`;

export interface ReportBatch {
  readonly version: 1;
  /** Random, made once per batch and kept across retries (the hub's idempotency key). */
  readonly batchId: string;
  readonly instance: string;
  readonly snapshotVersion: number | null;
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly passSampleRate: number;
  /**
   * Events lost since the previous delivered batch (queue full, or sent with a batch that was
   * given up); the requests they describe are still in `counts`.
   */
  readonly dropped: number;
  readonly counts: readonly CountEntry[];
  readonly events: readonly (Omit<ReportEvent, 'time'> & { time: string })[];
  readonly signals: readonly (Omit<SignalEvent, 'time'> & { time: string })[];
  /** Hits per (rate-limit rule, key) in the period, for the hub's fleet-wide limits. */
  readonly rateLimitKeys: readonly KeyCount[];
  /** Requests per client address in the period, for the hub's request-rate detection. */
  readonly addressCounts: readonly { ip: string; count: number }[];
}

type SendResult = 'sent' | 'retry' | 'drop' | 'stop';

export class ReportFlusher {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private stopped = false;
  private closing = false;
  private wake: (() => void) | undefined;
  private closeDeadline = Number.POSITIVE_INFINITY;
  private flushSoon = false;
  private urgent: NodeJS.Timeout | undefined;
  /** Aborts requests in flight when `close()` runs out of time. */
  private readonly closeAbort = new AbortController();

  constructor(
    private readonly config: RampartConfig,
    private readonly queue: ReportQueue,
    private readonly stats: Stats,
    private readonly logger: GuardedLogger,
    private readonly snapshotVersion: () => number | null,
    private readonly keyCounts: () => KeyCount[] = () => [],
  ) {}

  start(): void {
    this.timer = setInterval(() => this.flush(), this.config.reportIntervalMs);
    this.timer.unref();
  }

  /** True once the report URL refused us: callers drop events instead of queueing them. */
  get disabled(): boolean {
    return this.stopped;
  }

  /** Called after an event was queued: starts a flush on a later turn when a batch is full. */
  notify(): void {
    if (this.flushSoon || this.flushing || this.queue.size < this.config.reportBatchSize) return;
    this.flushSoon = true;
    setImmediate(() => {
      this.flushSoon = false;
      this.flush();
    }).unref();
  }

  /** Called after a signal or a refusal was queued: a flush within {@link URGENT_FLUSH_MS}. */
  notifyUrgent(): void {
    if (this.urgent !== undefined || this.stopped) return;
    this.urgent = setTimeout(() => {
      this.urgent = undefined;
      this.flush();
    }, URGENT_FLUSH_MS);
    this.urgent.unref();
  }

  /** Sends what is pending, batch after batch; concurrent calls share the run. */
  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.flushing ??= this.run().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and sends what is queued, giving up after `closeTimeoutMs`. Idempotent. */
  async close(): Promise<void> {
    if (this.closing) return this.flushing;
    this.closing = true;
    clearInterval(this.timer);
    clearTimeout(this.urgent);
    this.closeDeadline = Date.now() + this.config.closeTimeoutMs;
    this.wake?.(); // a retry wait in progress now honours the deadline
    const deadline = setTimeout(() => this.closeAbort.abort(), this.config.closeTimeoutMs);
    try {
      await this.flushing;
      await this.flush();
    } finally {
      clearTimeout(deadline);
    }
    const left = this.queue.size;
    if (left > 0) {
      this.queue.take(left);
      this.stats.reports.dropped += left;
      this.logger.warn(`dropped ${left} report events not sent before close() timed out`);
    }
    this.stats.reports.pending = 0;
  }

  private async run(): Promise<void> {
    try {
      // Interval flush: send even a partial batch (or counts alone); afterwards only full ones.
      let first = true;
      while (
        !this.stopped &&
        (first ||
          this.queue.size >= this.config.reportBatchSize ||
          (this.closing && this.pending()))
      ) {
        if (!this.pending()) break;
        first = false;
        if (this.closing && Date.now() >= this.closeDeadline) break;
        await this.sendNextBatch();
      }
    } catch (error) {
      this.stats.errors++;
      this.logger.throttled(
        'report-internal',
        'error',
        `report flusher failed: ${describeError(error)}`,
      );
    } finally {
      this.stats.reports.pending = this.queue.size;
    }
  }

  private pending(): boolean {
    return this.queue.size > 0 || this.queue.hasCounts || this.queue.signalCount > 0;
  }

  private async sendNextBatch(): Promise<void> {
    const events = this.queue.take(this.config.reportBatchSize);
    const signals = this.queue.takeSignals(MAX_SIGNALS_PER_BATCH);
    const counts = this.queue.takeCounts();
    const dropped = this.queue.droppedSinceBatch;
    this.queue.droppedSinceBatch = 0;
    const periodStart = this.queue.periodStart;
    const periodEnd = Date.now();
    this.queue.periodStart = periodEnd;
    const batch: ReportBatch = {
      version: 1,
      batchId: randomUUID(),
      instance: this.config.instanceId,
      snapshotVersion: this.snapshotVersion(),
      periodStart: new Date(periodStart).toISOString(),
      periodEnd: new Date(periodEnd).toISOString(),
      passSampleRate: this.config.passSampleRate,
      dropped,
      counts,
      events: events.map((e) => ({ ...e, time: new Date(e.time).toISOString() })),
      signals: signals.map((e) => ({ ...e, time: new Date(e.time).toISOString() })),
      rateLimitKeys: this.keyCounts(),
      addressCounts: this.queue.takeAddressCounts(),
    };
    const links: Link[] = [];
    for (const event of events) {
      const link = linkFrom(event.traceparent);
      if (link !== undefined) links.push(link);
      if (links.length === MAX_LINKS) break;
    }
    const attributes = {
      'rampart.report.batch_id': batch.batchId,
      'rampart.report.events': events.length,
      'rampart.report.signals': signals.length,
      'rampart.report.counts': counts.length,
    };
    await inRootSpan('rampart.report.flush', { attributes, links }, async (span) => {
      const body = await gzip(JSON.stringify(batch));
      span.setAttribute('rampart.report.bytes', body.length);
      const outcome = await this.deliver(body, events.length, signals.length);
      span.setAttribute('rampart.report.outcome', outcome);
      if (outcome !== 'sent') {
        // Given up: the events and signals are lost, the counts go back for the next batch.
        this.stats.reports.batchesFailed++;
        this.stats.reports.dropped += events.length + signals.length;
        if (outcome === 'stop') {
          const left = this.queue.size;
          this.queue.take(left);
          this.stats.reports.dropped += left;
        } else {
          this.queue.mergeCounts(counts);
          this.queue.droppedSinceBatch += dropped + events.length;
        }
      }
    });
  }

  /** Posts `body` until it is taken, retrying with backoff: `sent`, or why it was given up. */
  private async deliver(
    body: Buffer,
    events: number,
    signals: number,
  ): Promise<'sent' | 'retry' | 'drop' | 'stop'> {
    for (let attempt = 1; ; attempt++) {
      const { result, waitMs } = await this.post(body);
      if (result === 'sent') {
        this.stats.reports.sent += events;
        this.stats.reports.signalsSent += signals;
        this.stats.reports.batchesSent++;
        return result;
      }
      if (result === 'retry' && attempt < this.config.reportMaxAttempts) {
        const wait = waitMs ?? backoffDelay(attempt, { baseMs: 500, maxMs: 30_000 });
        if (!this.closing || Date.now() + wait < this.closeDeadline) {
          this.stats.reports.retries++;
          await this.sleep(wait);
          if (!this.closing || Date.now() < this.closeDeadline) continue;
        }
      }
      return result;
    }
  }

  private async post(body: Buffer): Promise<{ result: SendResult; waitMs?: number }> {
    let response: Response;
    try {
      response = await fetch(this.config.reportUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.config.siteKey}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'user-agent': USER_AGENT,
          'x-rampart-instance': this.config.instanceId,
        },
        body,
        redirect: 'error',
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), this.closeAbort.signal]),
      });
      await response.body?.cancel().catch(() => undefined);
    } catch (error) {
      this.logger.throttled(
        'report-network',
        'warn',
        `sending reports failed: ${describeError(error)}`,
      );
      return { result: 'retry' };
    }
    const status = response.status;
    if (status >= 200 && status < 300) return { result: 'sent' };
    if (status === 401 || status === 403 || status === 404 || status === 410) {
      this.stopped = true;
      this.stats.reports.stoppedReason = `HTTP ${status} from the report URL`;
      this.logger.onlyOnce(
        'reports-refused',
        'warn',
        `the report URL answered ${status}; reporting is stopped until restart and events are dropped (counted in stats)`,
      );
      return { result: 'stop' };
    }
    if (status === 408 || status === 429 || status >= 500) {
      this.logger.throttled(
        'report-status',
        'warn',
        `the report URL answered ${status}; retrying with backoff`,
      );
      const waitMs =
        status === 429 || status === 503
          ? retryAfterMs(response.headers.get('retry-after'), MAX_RETRY_AFTER_MS)
          : undefined;
      return { result: 'retry', waitMs };
    }
    this.logger.throttled(
      'report-rejected',
      'warn',
      `the report URL rejected a batch with ${status}; dropped it`,
    );
    return { result: 'drop' };
  }

  /** Waits `ms`, cut short to the close deadline once `close()` was called. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      // Unref'd so a pending retry never keeps the app alive, except during close(): the app
      // awaits the flush then, and the deadline bounds the wait.
      const timer = setTimeout(done, ms);
      if (!this.closing) timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        setTimeout(done, Math.max(0, Math.min(ms, this.closeDeadline - Date.now())));
      };
    });
  }
}
