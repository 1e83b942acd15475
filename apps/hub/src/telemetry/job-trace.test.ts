/**
 * Trace context across BullMQ jobs, read through the SDK's in-memory exporter: a job continues
 * the trace that queued it (`parent`) or links to it (`link`), carries the semantic conventions'
 * messaging attributes, links to its events' requests, and records a failure before BullMQ
 * retries it.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { recordSpans, type SpanRecorder } from '@rampart/test-services/span-recorder';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inJobSpan, inStepSpan, linkFromTraceparent, traceCarrier } from './job-trace.js';

let spans: SpanRecorder;
beforeAll(() => {
  spans = recordSpans();
});
afterAll(async () => {
  await spans.close();
});
afterEach(() => spans.reset());

/** The carrier a request span would have put in a job's data. */
function queuedBy(): { carrier: Record<string, string>; traceId: string; spanId: string } {
  const request = trace.getTracer('test').startSpan('POST /v1/reports');
  const carrier = context.with(trace.setSpan(context.active(), request), () => traceCarrier());
  request.end();
  const { traceId, spanId } = request.spanContext();
  return { carrier, traceId, spanId };
}

const job = { queue: 'report-ingest', job: 'ingest-batch', jobId: 'shop.b1' } as const;

describe('inJobSpan', () => {
  it('continues the trace that queued the job, as a consumer span with messaging attributes', async () => {
    const queued = queuedBy();
    expect(queued.carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const inner = await inJobSpan(
      {
        ...job,
        carrier: queued.carrier,
        relation: 'parent',
        attributes: { 'rampart.site.id': 'shop' },
      },
      async () => {
        await inStepSpan('rampart.detection.inspect', {}, async () => undefined);
        return trace.getSpan(context.active())?.spanContext().traceId;
      },
    );
    const [processed] = spans.named('process report-ingest');
    const [step] = spans.named('rampart.detection.inspect');
    expect(processed?.name).toBe('process report-ingest');
    expect(processed?.kind).toBe(SpanKind.CONSUMER);
    expect(processed?.spanContext().traceId).toBe(queued.traceId);
    expect(processed?.parentSpanContext?.spanId).toBe(queued.spanId);
    expect(processed?.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'report-ingest',
      'messaging.message.id': 'shop.b1',
      'rampart.job.name': 'ingest-batch',
      'rampart.site.id': 'shop',
    });
    expect(step?.parentSpanContext?.spanId).toBe(processed?.spanContext().spanId);
    expect(inner).toBe(queued.traceId);
  });

  it('starts a trace of its own linked to the queuing one, with the other links after it', async () => {
    const queued = queuedBy();
    const other = queuedBy();
    await inJobSpan(
      {
        ...job,
        carrier: queued.carrier,
        relation: 'link',
        links: [linkFromTraceparent(other.carrier.traceparent)].flatMap((l) => l ?? []),
      },
      async () => undefined,
    );
    const [processed] = spans.named('process report-ingest');
    expect(processed?.spanContext().traceId).not.toBe(queued.traceId);
    expect(processed?.parentSpanContext).toBeUndefined();
    expect(processed?.links.map((l) => l.context.traceId)).toEqual([queued.traceId, other.traceId]);
  });

  it('keeps at most 128 links', async () => {
    const links = Array.from({ length: 300 }, () =>
      linkFromTraceparent(queuedBy().carrier.traceparent),
    );
    await inJobSpan(
      { ...job, carrier: undefined, relation: 'parent', links: links.flatMap((l) => l ?? []) },
      async () => undefined,
    );
    expect(spans.named('process report-ingest')[0]?.links).toHaveLength(128);
  });

  it('records a failure on the span and rethrows it for BullMQ to retry', async () => {
    await expect(
      inJobSpan({ ...job, carrier: undefined, relation: 'parent' }, async () => {
        throw new TypeError('database away');
      }),
    ).rejects.toThrow('database away');
    const [processed] = spans.named('process report-ingest');
    expect(processed?.status).toMatchObject({
      code: SpanStatusCode.ERROR,
      message: 'database away',
    });
    expect(processed?.attributes['error.type']).toBe('TypeError');
    expect(processed?.events.map((e) => e.name)).toContain('exception');
  });
});

describe('linkFromTraceparent', () => {
  it('reads a W3C traceparent, and nothing else', () => {
    expect(
      linkFromTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.context,
    ).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });
    expect(linkFromTraceparent(null)).toBeUndefined();
    expect(linkFromTraceparent('not a traceparent')).toBeUndefined();
    expect(
      linkFromTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01'),
    ).toBeUndefined();
  });
});
