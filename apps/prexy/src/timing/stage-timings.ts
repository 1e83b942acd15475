/**
 * Where a request's time went, in the spirit of the Prexy article's timing header: the stages a
 * person needs to tell a slow upstream from a slow rule set.
 *
 * - `upstream-connect`: from dispatching the request until it is written to an upstream
 *   connection (waiting for a pooled connection, plus TCP connect for a new one);
 * - `upstream-headers`: from then until the upstream's response headers;
 * - `rules`: finding the route's rule set for the path (and the asset's bitmap);
 * - `substitution`: time spent in the engine for this body (a trailer: known only at the end);
 * - `total`: from the request's arrival to the last byte handed to the socket (a trailer).
 *
 * The first three go in a `Server-Timing` header; the last two in a `Server-Timing` trailer
 * when the client sent `TE: trailers`, and in the access log line either way.
 */
import { performance } from 'node:perf_hooks';
import { serverTiming } from '@rampart/telemetry/http/server-timing';

const round = (ms: number) => Math.round(ms * 1000) / 1000;

export class StageTimings {
  readonly start = performance.now();
  private dispatched = 0;
  private written = 0;
  private headers = 0;
  rulesMs = 0;
  substitutionMs = 0;

  markDispatched(): void {
    this.dispatched = performance.now();
  }

  markWritten(): void {
    this.written = performance.now();
  }

  markHeaders(): void {
    this.headers = performance.now();
  }

  /** `performance.now()` when the request was handed to the pool (0 before). */
  get dispatchedAt(): number {
    return this.dispatched;
  }

  /** When the request was written to an upstream connection (0 before). */
  get writtenAt(): number {
    return this.written;
  }

  /** When the upstream's response headers arrived (0 before). */
  get headersAt(): number {
    return this.headers;
  }

  get connectMs(): number {
    return this.written > 0 ? this.written - this.dispatched : 0;
  }

  get headersMs(): number {
    return this.headers > 0 && this.written > 0 ? this.headers - this.written : 0;
  }

  /** The `Server-Timing` header value, known once the upstream's headers arrived. */
  header(): string {
    return serverTiming([
      { name: 'upstream-connect', dur: this.connectMs },
      { name: 'upstream-headers', dur: this.headersMs },
      { name: 'rules', dur: this.rulesMs },
    ]);
  }

  /** The `Server-Timing` trailer value, at the end of the body. */
  trailer(): string {
    return serverTiming([
      { name: 'substitution', dur: this.substitutionMs },
      { name: 'total', dur: performance.now() - this.start },
    ]);
  }

  /** Every figure, for the access log. */
  toJSON(): Record<string, number> {
    return {
      upstreamConnectMs: round(this.connectMs),
      upstreamHeadersMs: round(this.headersMs),
      rulesMs: round(this.rulesMs),
      substitutionMs: round(this.substitutionMs),
      totalMs: round(performance.now() - this.start),
    };
  }
}

/** Whether the request's `TE` header says the client takes trailers. */
export function acceptsTrailers(te: string | string[] | undefined): boolean {
  if (te === undefined) return false;
  return (Array.isArray(te) ? te.join(',') : te)
    .split(',')
    .some((t) => t.trim().toLowerCase().startsWith('trailers'));
}
