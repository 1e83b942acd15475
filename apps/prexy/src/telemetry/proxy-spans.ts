/**
 * Prexy's stage spans, children of the request's server span (the HTTP instrumentation's), made
 * when the response is done from the times `StageTimings` measured, so the proxy path pays
 * nothing for them while the body streams:
 *
 * - `prexy.upstream.connect`: dispatch until the request is on an upstream connection;
 * - `prexy.upstream.headers`: until the upstream's response headers;
 * - `prexy.substitution`: from the headers to the end of the body, for substituted responses,
 *   with the rules that ran (`all`, `narrowed` by the bitmap, `skipped`), matches, bytes in and
 *   out, and the engine's own time.
 *
 * The upstream request itself is the undici instrumentation's client span, which also carries
 * the trace context to the origin (so a request through prexy and the demo app is one trace).
 * Nothing is made when the request's span is not recording (no SDK, or not sampled).
 */
import { performance } from 'node:perf_hooks';
import { type Context, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { StageTimings } from '../timing/stage-timings.js';

const tracer = trace.getTracer('@rampart/prexy');

/** A `performance.now()` reading as an absolute time. */
const at = (monotonicMs: number) => performance.timeOrigin + monotonicMs;

export interface SubstitutionRecord {
  readonly rules: 'all' | 'narrowed' | 'skipped';
  readonly ruleSet: string;
  readonly matches: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly bufferLimitHit: boolean;
}

export interface StageRecord {
  readonly timings: StageTimings;
  /** When the body ended (or failed), `performance.now()`. */
  readonly endedAt: number;
  readonly substitution: SubstitutionRecord | undefined;
  readonly error: string | undefined;
}

/**
 * The context of the request being handled (its server span), when that span records: taken
 * when the request arrives, since by the time the response is done the instrumentation may have
 * ended the server span already. Undefined when nothing is traced.
 */
export function tracedRequest(active: Context = context.active()): Context | undefined {
  return trace.getSpan(active)?.isRecording() === true ? active : undefined;
}

/** Records the stage spans of one request under `parent` (from {@link tracedRequest}). */
export function recordStages(parent: Context, record: StageRecord): void {
  const { timings } = record;
  if (timings.writtenAt > 0) {
    end(
      tracer.startSpan('prexy.upstream.connect', { startTime: at(timings.dispatchedAt) }, parent),
      timings.writtenAt,
    );
  }
  if (timings.headersAt > 0) {
    end(
      tracer.startSpan('prexy.upstream.headers', { startTime: at(timings.writtenAt) }, parent),
      timings.headersAt,
    );
  }
  const s = record.substitution;
  if (s !== undefined && timings.headersAt > 0) {
    const span = tracer.startSpan(
      'prexy.substitution',
      {
        startTime: at(timings.headersAt),
        attributes: {
          'prexy.rules.run': s.rules,
          'prexy.rules.set': s.ruleSet,
          'prexy.substitution.matches': s.matches,
          'prexy.substitution.bytes_in': s.bytesIn,
          'prexy.substitution.bytes_out': s.bytesOut,
          'prexy.substitution.engine_ms': timings.substitutionMs,
          'prexy.substitution.buffer_limit_hit': s.bufferLimitHit,
        },
      },
      parent,
    );
    if (record.error !== undefined)
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.error });
    end(span, record.endedAt);
  }
}

function end(span: Span, monotonicMs: number): void {
  span.end(at(monotonicMs));
}
