/**
 * The client's metrics, through the OpenTelemetry metrics API: observable instruments read the
 * counters the client keeps anyway (`stats.ts`) when a reader collects (a Prometheus scrape),
 * so the request path pays nothing for them. With no SDK in the process the meter is a no-op.
 *
 * | instrument | Prometheus name | what |
 * | --- | --- | --- |
 * | `rampart.waf.decisions` | `rampart_waf_decisions_total{action}` | evaluated requests by decision |
 * | `rampart.waf.refusals` | `rampart_waf_refusals_total{reason}` | requests the client answered itself |
 * | `rampart.waf.errors` | `rampart_waf_errors_total` | failures inside the WAF (fail mode applied) |
 * | `rampart.snapshot.version` | `rampart_snapshot_version` | version in use (absent before the first) |
 * | `rampart.snapshot.age` | `rampart_snapshot_age` | seconds since the snapshot in use was swapped in |
 * | `rampart.sync.polls` | `rampart_sync_polls_total{result}` | polls by `success` / `failure` |
 * | `rampart.reports.queue.depth` | `rampart_reports_queue_depth` | events waiting to be sent |
 * | `rampart.reports.events` | `rampart_reports_events_total{fate}` | events `queued`, `sent`, `dropped` |
 * | `rampart.reports.batches` | `rampart_reports_batches_total{result}` | batches `sent`, `failed` |
 */
import { type BatchObservableCallback, metrics } from '@opentelemetry/api';
import type { Stats } from '../stats/stats.js';
import { WAF_CLIENT_VERSION } from '../version.js';

/**
 * Observes the counters of one client, labelled with its `rampart.client.instance` (a process
 * may run several clients: prexy runs one per site). Returns the function that stops observing
 * (the client's `close()`), so a closed client is neither reported nor kept alive.
 */
export function observeClientMetrics(instance: string, stats: () => Stats): () => void {
  const meter = metrics.getMeter('@rampart/waf-client', WAF_CLIENT_VERSION);
  const decisions = meter.createObservableCounter('rampart.waf.decisions', {
    description: 'Requests evaluated, by decision action (monitor-mode decisions included).',
  });
  const refusals = meter.createObservableCounter('rampart.waf.refusals', {
    description: 'Requests the client answered itself: blocked, rate limited, or failed closed.',
  });
  const errors = meter.createObservableCounter('rampart.waf.errors', {
    description: 'Failures inside the WAF; the request got the fail mode.',
  });
  const version = meter.createObservableGauge('rampart.snapshot.version', {
    description: 'Version of the snapshot in use.',
  });
  const age = meter.createObservableGauge('rampart.snapshot.age', {
    description: 'Time since the snapshot in use was swapped in.',
    unit: 's',
  });
  const polls = meter.createObservableCounter('rampart.sync.polls', {
    description: 'Snapshot polls, by result.',
  });
  const depth = meter.createObservableGauge('rampart.reports.queue.depth', {
    description: 'Report events waiting to be sent.',
  });
  const events = meter.createObservableCounter('rampart.reports.events', {
    description:
      'Report events queued, sent, and dropped (queue full, batch given up, or stopped).',
  });
  const batches = meter.createObservableCounter('rampart.reports.batches', {
    description: 'Report batches sent, and given up.',
  });
  const client = { 'rampart.client.instance': instance };
  const observables = [decisions, refusals, errors, version, age, polls, depth, events, batches];
  const callback: BatchObservableCallback = (result) => {
    const s = stats();
    for (const [action, count] of Object.entries(s.decisions))
      result.observe(decisions, count, { ...client, action });
    result.observe(refusals, s.refused.blocked, { ...client, reason: 'blocked' });
    result.observe(refusals, s.refused.rateLimited, { ...client, reason: 'rate_limited' });
    result.observe(refusals, s.refused.failedClosed, { ...client, reason: 'failed_closed' });
    result.observe(errors, s.errors, client);
    if (s.snapshotVersion !== null) result.observe(version, s.snapshotVersion, client);
    if (s.sync.lastSwapAt !== null)
      result.observe(age, Math.max(0, (Date.now() - s.sync.lastSwapAt) / 1000), client);
    result.observe(polls, s.sync.successes, { ...client, result: 'success' });
    result.observe(polls, s.sync.failures, { ...client, result: 'failure' });
    result.observe(depth, s.reports.pending, client);
    result.observe(events, s.reports.queued + s.reports.signals, { ...client, fate: 'queued' });
    result.observe(events, s.reports.sent + s.reports.signalsSent, { ...client, fate: 'sent' });
    result.observe(events, s.reports.dropped, { ...client, fate: 'dropped' });
    result.observe(batches, s.reports.batchesSent, { ...client, result: 'sent' });
    result.observe(batches, s.reports.batchesFailed, { ...client, result: 'failed' });
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
