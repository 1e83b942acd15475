/** What a prexy worker counts; read by the logs and the metrics (`telemetry/proxy-metrics.ts`). */
export interface ProxyCounters {
  requests: number;
  /** Refused before any upstream was contacted: bad target, unknown host, edge WAF. */
  refused: number;
  /** Upstream failures by kind (`connect_refused`, `headers_timeout`, `body_aborted`...). */
  upstreamErrors: Record<string, number>;
  /** Clients that went away before their response was complete. */
  clientAborts: number;
  substituted: number;
  /** Matches the engine found in substituted bodies. */
  matches: number;
  /** Substituted bodies that hit `maxBufferedBytes` and passed through from there. */
  bufferLimitHits: number;
  bytesIn: number;
  bytesOut: number;
  /** Responses of remembered assets: all rules skipped, or some. */
  bitmapSkippedAll: number;
  bitmapNarrowed: number;
}

export function newCounters(): ProxyCounters {
  return {
    requests: 0,
    refused: 0,
    upstreamErrors: {},
    clientAborts: 0,
    substituted: 0,
    matches: 0,
    bufferLimitHits: 0,
    bytesIn: 0,
    bytesOut: 0,
    bitmapSkippedAll: 0,
    bitmapNarrowed: 0,
  };
}

export function countUpstreamError(counters: ProxyCounters, kind: string): void {
  counters.upstreamErrors[kind] = (counters.upstreamErrors[kind] ?? 0) + 1;
}
