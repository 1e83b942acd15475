/**
 * The client's spans, through the OpenTelemetry API only: with no SDK in the process (or
 * `OTEL_SDK_DISABLED=true`) the API is a no-op and none of this costs more than a context
 * lookup per request.
 *
 * - `rampart.waf.evaluate`: a child of the request's span (the HTTP server span of the app's
 *   instrumentation) for each refusal, monitored match or failure, made only when that span is
 *   recording (sampled): the client never starts traces of its own on the request path, and an
 *   unsampled request pays nothing. Made after the fact with the measured start and end, so the
 *   evaluation itself is not slowed by span bookkeeping. A plain pass (most requests) only sets
 *   `rampart.waf.action` / `.outcome` and `rampart.snapshot.version` on the request's span: a
 *   child span costs 2-4 us with the SDK's batch processor, about as much as the evaluation,
 *   the attributes about 0.2 us (`bench:overhead`, tracing on).
 * - `rampart.report.flush`: one per report batch sent, a root span linked to the traces of the
 *   requests its events describe (at most {@link MAX_LINKS}); the POST to the hub is its child,
 *   and carries its context on to the hub's ingestion job.
 * - `rampart.snapshot.swap` and failed `rampart.snapshot.sync` polls: root spans from the
 *   poll's start to the swap (or the failure).
 *
 * Attribute names follow the semantic conventions where one exists (`client.address`,
 * `http.request.method`, `error.type`); the rest are `rampart.*`.
 */
import { performance } from 'node:perf_hooks';
import {
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type TimeInput,
  trace,
} from '@opentelemetry/api';
import type { Decision } from '@rampart/rules-core/evaluator/decision';
import { WAF_CLIENT_VERSION } from '../version.js';

const TRACER_NAME = '@rampart/waf-client';
/** Span links per flush span at most (the SDK's default link limit). */
export const MAX_LINKS = 128;

const tracer = trace.getTracer(TRACER_NAME, WAF_CLIENT_VERSION);

/** A `performance.now()` reading as an absolute time. */
const at = (monotonicMs: number): TimeInput => performance.timeOrigin + monotonicMs;

/** The span of the request being handled, when it is recording; else undefined. */
export function recordingSpan(): Span | undefined {
  const span = trace.getSpan(context.active());
  return span?.isRecording() ? span : undefined;
}

/** The W3C `traceparent` naming `span` (how a report event points at its request's trace). */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags & 1 ? '01' : '00'}`;
}

/** What the evaluate span records about one request. */
export interface EvaluationRecord {
  readonly startedMs: number;
  readonly endedMs: number;
  readonly clientIp: string;
  readonly method: string | undefined;
  readonly decision: Decision | null;
  readonly outcome: string;
  readonly error?: unknown;
}

/** Records the `rampart.waf.evaluate` span of a request, under `parent`. */
export function recordEvaluation(parent: Span, record: EvaluationRecord): void {
  const { decision } = record;
  const span = tracer.startSpan(
    'rampart.waf.evaluate',
    {
      startTime: at(record.startedMs),
      attributes: {
        'client.address': record.clientIp,
        ...(record.method === undefined ? {} : { 'http.request.method': record.method }),
        'rampart.waf.action': decision?.action ?? 'unevaluated',
        'rampart.waf.outcome': record.outcome,
        ...(decision === null
          ? {}
          : {
              'rampart.waf.mode': decision.mode,
              'rampart.snapshot.version': decision.snapshotVersion,
              ...(decision.ruleId === null ? {} : { 'rampart.waf.rule_id': decision.ruleId }),
              ...(decision.category === null ? {} : { 'rampart.waf.category': decision.category }),
              ...(decision.monitored === null
                ? {}
                : { 'rampart.waf.monitored_rule_id': decision.monitored.ruleId }),
            }),
      },
    },
    trace.setSpan(context.active(), parent),
  );
  if (record.error !== undefined) failSpan(span, record.error);
  span.end(at(record.endedMs));
}

/** Marks `request`'s span with a pass decision (no span of its own: see the module comment). */
export function annotatePass(request: Span, decision: Decision): void {
  request.setAttributes({
    'rampart.waf.action': decision.action,
    'rampart.waf.outcome': 'passed',
    'rampart.snapshot.version': decision.snapshotVersion,
  });
}

/**
 * The span context a `traceparent` names, as a link (undefined for anything else, or without an
 * SDK: then there is nothing to link to). Read with the propagator the SDK registered.
 */
export function linkFrom(traceparent: string | null | undefined): Link | undefined {
  if (traceparent === null || traceparent === undefined) return undefined;
  const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return linked === undefined ? undefined : { context: linked };
}

/**
 * Runs `work` in a new root span (never a child of whatever request happened to schedule it),
 * ending it when `work` settles; a rejection is recorded on the span and rethrown.
 */
export function inRootSpan<T>(
  name: string,
  options: { attributes?: Record<string, string | number | boolean>; links?: Link[] },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { ...options, root: true }, ROOT_CONTEXT, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Records a finished piece of background work (epoch ms bounds) as a root span. */
export function recordRootSpan(
  name: string,
  startedAtMs: number,
  attributes: Record<string, string | number | boolean>,
  error?: unknown,
): void {
  const span = tracer.startSpan(name, { root: true, startTime: startedAtMs, attributes });
  if (error !== undefined) failSpan(span, error);
  span.end();
}

function failSpan(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setAttribute('error.type', exception.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}
