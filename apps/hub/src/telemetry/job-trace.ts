/**
 * Trace context across the hub's BullMQ queues. A job carries the W3C trace context of the
 * code that queued it (`traceCarrier()`, stored in the job's data) and its worker runs inside a
 * span made from it (`inJobSpan`), so a report flush on a client, the hub's `POST /v1/reports`
 * and the ingestion job that processes the batch minutes later are one story in Jaeger.
 *
 * - `parent`: the job span continues the queuing trace (one message, one job: a report batch).
 * - `link`: the job span starts a trace of its own, linked to the queuing one (a coalesced
 *   snapshot build serves every change that asked for it, not only the first).
 * Further links (the traces of the requests a batch's events describe) come from the caller.
 *
 * Only the OpenTelemetry API is used: without an SDK the carrier is empty and the spans no-ops.
 */
import {
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

export const HUB_TRACER = '@rampart/hub';
/** Links per span at most (the SDK's default limit). */
export const MAX_LINKS = 128;

const tracer = trace.getTracer(HUB_TRACER);

/** The W3C trace context of the active span, for a job's data (empty without one). */
export function traceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

export interface JobSpan {
  readonly queue: string;
  /** The job's name (`ingest-batch`); with the queue, the span's name. */
  readonly job: string;
  readonly jobId: string | undefined;
  /** What `traceCarrier()` stored when the job was queued (absent for older jobs). */
  readonly carrier: Record<string, string> | undefined;
  readonly relation: 'parent' | 'link';
  readonly links?: readonly Link[];
  readonly attributes?: Record<string, string | number | boolean>;
}

/**
 * Runs a job's `work` inside its span (`process <queue>`, kind consumer, with the messaging
 * attributes of the semantic conventions), ended when `work` settles; a failure is recorded on
 * the span and rethrown (BullMQ retries it).
 */
export function inJobSpan<T>(job: JobSpan, work: (span: Span) => Promise<T>): Promise<T> {
  const queued =
    job.carrier === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, job.carrier);
  const queuedSpan = trace.getSpanContext(queued);
  const links = [...(job.links ?? [])];
  if (job.relation === 'link' && queuedSpan !== undefined) links.unshift({ context: queuedSpan });
  const parent = job.relation === 'parent' ? queued : ROOT_CONTEXT;
  return tracer.startActiveSpan(
    `process ${job.queue}`,
    {
      kind: SpanKind.CONSUMER,
      root: job.relation === 'link' || queuedSpan === undefined,
      links: links.slice(0, MAX_LINKS),
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': job.queue,
        'rampart.job.name': job.job,
        ...(job.jobId === undefined ? {} : { 'messaging.message.id': job.jobId }),
        ...job.attributes,
      },
    },
    parent,
    (span) => endedAfter(span, work),
  );
}

/** Runs `work` in a child span of the active one (a step of a job: detection, a build's I/O). */
export function inStepSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, (span) => endedAfter(span, work));
}

/** Runs `work`, then ends `span`; a failure is recorded on it and rethrown. */
async function endedAfter<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await work(span);
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks `span` failed with `error` (exception event, `error.type`, error status). */
export function recordFailure(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setAttribute('error.type', exception.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}

/**
 * The span context a W3C `traceparent` names, as a link; undefined for anything else (or
 * without an SDK). Read with the propagator the SDK registered, like the job's own carrier.
 */
export function linkFromTraceparent(traceparent: string | null | undefined): Link | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return linked === undefined ? undefined : { context: linked };
}
