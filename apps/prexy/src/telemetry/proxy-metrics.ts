/**
 * Prexy's metrics through the OpenTelemetry metrics API (the Prometheus endpoint of
 * `@rampart/telemetry`; a no-op without the SDK). Counters are observed from the worker's
 * `ProxyCounters` at scrape time; the stage durations are histograms recorded per response.
 *
 * | Prometheus name | what |
 * | --- | --- |
 * | `prexy_requests_total`, `prexy_refused_total`, `prexy_client_aborts_total` | requests; refused before any upstream; clients gone mid-response |
 * | `prexy_upstream_errors_total{kind}` | upstream failures by kind |
 * | `prexy_bytes_total{direction}` | body bytes from upstreams (`in`) and to clients (`out`) |
 * | `prexy_substituted_total`, `prexy_matches_total` | substituted responses, and the matches in them |
 * | `prexy_buffer_limit_hits_total` | bodies that hit `maxBufferedBytes` |
 * | `prexy_bitmap_total{result}` | remembered assets: `skipped` (no rule ran), `narrowed` |
 * | `prexy_stage_duration{stage}` (seconds) | `upstream_connect`, `upstream_headers`, `substitution` (engine time), `total` |
 */
import { type BatchObservableCallback, type Histogram, metrics } from '@opentelemetry/api';
import type { ProxyCounters } from '../proxy/proxy-counters.js';
import type { StageTimings } from '../timing/stage-timings.js';

/** Bucket bounds (seconds) for stage durations: 50 us to 10 s. */
const STAGE_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
  5, 10,
];

export class ProxyMetrics {
  private readonly stages: Histogram;
  private readonly stop: () => void;

  constructor(counters: ProxyCounters) {
    const meter = metrics.getMeter('@rampart/prexy');
    this.stages = meter.createHistogram('prexy.stage.duration', {
      description: 'Time of each proxy stage per response.',
      unit: 's',
      advice: { explicitBucketBoundaries: STAGE_BUCKETS },
    });
    const counter = (name: string, description: string) =>
      meter.createObservableCounter(name, { description });
    const requests = counter('prexy.requests', 'Requests received.');
    const refused = counter('prexy.refused', 'Requests refused before any upstream was contacted.');
    const aborts = counter('prexy.client_aborts', 'Clients gone before their response ended.');
    const upstream = counter('prexy.upstream.errors', 'Upstream failures, by kind.');
    const bytes = counter('prexy.bytes', 'Body bytes from upstreams (in) and to clients (out).');
    const substituted = counter('prexy.substituted', 'Responses whose body was substituted.');
    const matches = counter('prexy.matches', 'Matches found in substituted bodies.');
    const limits = counter('prexy.buffer_limit_hits', 'Bodies that hit maxBufferedBytes.');
    const bitmap = counter('prexy.bitmap', 'Remembered assets: rules skipped or narrowed.');
    const observables = [
      requests,
      refused,
      aborts,
      upstream,
      bytes,
      substituted,
      matches,
      limits,
      bitmap,
    ];
    const callback: BatchObservableCallback = (result) => {
      result.observe(requests, counters.requests);
      result.observe(refused, counters.refused);
      result.observe(aborts, counters.clientAborts);
      for (const [kind, n] of Object.entries(counters.upstreamErrors))
        result.observe(upstream, n, { kind });
      result.observe(bytes, counters.bytesIn, { direction: 'in' });
      result.observe(bytes, counters.bytesOut, { direction: 'out' });
      result.observe(substituted, counters.substituted);
      result.observe(matches, counters.matches);
      result.observe(limits, counters.bufferLimitHits);
      result.observe(bitmap, counters.bitmapSkippedAll, { result: 'skipped' });
      result.observe(bitmap, counters.bitmapNarrowed, { result: 'narrowed' });
    };
    meter.addBatchObservableCallback(callback, observables);
    this.stop = () => meter.removeBatchObservableCallback(callback, observables);
  }

  /** Records the stages of one finished response. */
  recordStages(timings: StageTimings, totalMs: number, substituted: boolean): void {
    if (timings.writtenAt > 0)
      this.stages.record(timings.connectMs / 1000, { stage: 'upstream_connect' });
    if (timings.headersAt > 0)
      this.stages.record(timings.headersMs / 1000, { stage: 'upstream_headers' });
    if (substituted) this.stages.record(timings.substitutionMs / 1000, { stage: 'substitution' });
    this.stages.record(totalMs / 1000, { stage: 'total' });
  }

  close(): void {
    this.stop();
  }
}
