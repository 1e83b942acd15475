/**
 * The client's spans and metrics, read through the OpenTelemetry SDK's in-memory exporter and an
 * on-demand metric reader (`@rampart/test-services/span-recorder`), as Jaeger and Prometheus
 * would receive them:
 *
 * - an evaluated request gets a `rampart.waf.evaluate` child of its recording span, with the
 *   decision; an unsampled or untraced request gets none;
 * - its report event names the request's trace, and the batch is sent in a root
 *   `rampart.report.flush` span linked to those traces;
 * - batched evaluation continues each waiting request in its own trace context (its own span);
 * - a snapshot swap is a span; the counters are instruments.
 */
import { context, type Span, TraceFlags, trace } from '@opentelemetry/api';
import {
  type MetricRecorder,
  recordMetrics,
  recordSpans,
  type SpanRecorder,
} from '@rampart/test-services/span-recorder';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  endOfTurn,
  eventually,
  fakeRequest,
  fakeResponse,
  handOver,
  SITE_KEY,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { type ReportReceiver, startReportReceiver } from '../test-support/report-receiver.js';
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';

let hub: FakeHub;
let spans: SpanRecorder;
let meters: MetricRecorder;
const cleanup: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  spans = recordSpans();
  meters = recordMetrics();
  hub = await startFakeHub(SITE_KEY, buildSnapshot(STANDARD_RULES, 4));
});
afterAll(async () => {
  await hub.close();
  await meters.close();
  await spans.close();
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  spans.reset();
});

async function client(
  options: Parameters<typeof testClient>[0] = {},
): Promise<{ client: TestClient; receiver: ReportReceiver }> {
  const receiver = await startReportReceiver();
  cleanup.push(() => receiver.close());
  const made = testClient({
    hubUrl: hub.url,
    reportUrl: receiver.url,
    passSampleRate: 0,
    evaluation: 'inline',
    ...options,
  });
  cleanup.push(() => made.close());
  await made.rampart.ready();
  return { client: made, receiver };
}

const tracer = trace.getTracer('test');

/**
 * Runs `work` inside a fresh request span (as the HTTP instrumentation makes one), ended when
 * `work` returns unless `open` (a request that waits for the end of the turn stays open).
 */
function inRequestSpan(work: (span: Span) => void, open = false): Span {
  const span = tracer.startSpan('GET');
  context.with(trace.setSpan(context.active(), span), () => work(span));
  if (!open) span.end();
  return span;
}

describe('the evaluate span', () => {
  it('is a child of the recording request span, with the decision', async () => {
    const { client: c } = await client();
    const request = inRequestSpan(() =>
      c.rampart.middleware(fakeRequest('/wp-admin/x', '192.0.2.9'), fakeResponse(), () => {}),
    );
    const [evaluate] = spans.named('rampart.waf.evaluate');
    expect(evaluate?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(evaluate?.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(evaluate?.attributes).toMatchObject({
      'client.address': '192.0.2.9',
      'http.request.method': 'GET',
      'rampart.waf.action': 'block',
      'rampart.waf.outcome': 'blocked',
      'rampart.waf.mode': 'enforce',
      'rampart.waf.rule_id': 'wp',
      'rampart.waf.category': 'pattern',
      'rampart.snapshot.version': 4,
    });
    // Timed with the evaluation itself: it sits inside the request span.
    const [start, end] = [evaluate?.startTime, evaluate?.endTime] as [
      [number, number],
      [number, number],
    ];
    expect(start[0] * 1e9 + start[1]).toBeLessThanOrEqual(end[0] * 1e9 + end[1]);
  });

  it('annotates the request span of a plain pass instead of adding a span', async () => {
    const { client: c } = await client();
    const request = inRequestSpan(() =>
      c.rampart.middleware(fakeRequest('/products'), fakeResponse(), () => {}),
    );
    expect(spans.named('rampart.waf.evaluate')).toEqual([]);
    const ended = spans
      .spans()
      .find((s) => s.spanContext().spanId === request.spanContext().spanId);
    expect(ended?.attributes).toMatchObject({
      'rampart.waf.action': 'pass',
      'rampart.waf.outcome': 'passed',
      'rampart.snapshot.version': 4,
    });
  });

  it('records a monitor-mode block as passed, naming the rule', async () => {
    const { client: c } = await client();
    inRequestSpan(() =>
      c.rampart.middleware(
        fakeRequest('/', '192.0.2.9', 'GET', { 'user-agent': 'sqlmap/1.7' }),
        fakeResponse(),
        () => {},
      ),
    );
    expect(spans.named('rampart.waf.evaluate')[0]?.attributes).toMatchObject({
      'rampart.waf.action': 'block',
      'rampart.waf.mode': 'monitor',
      'rampart.waf.rule_id': 'scanner',
      'rampart.waf.outcome': 'passed',
    });
  });

  it('is not made for an unsampled request, nor outside any span', async () => {
    const { client: c } = await client();
    const unsampled = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.NONE,
    });
    context.with(trace.setSpan(context.active(), unsampled), () =>
      c.rampart.middleware(fakeRequest('/wp-admin/'), fakeResponse(), () => {}),
    );
    c.rampart.middleware(fakeRequest('/wp-admin/'), fakeResponse(), () => {});
    expect(spans.named('rampart.waf.evaluate')).toEqual([]);
  });
});

describe('reports', () => {
  it("name the request's trace, and go in a root flush span linked to those traces", async () => {
    const { client: c, receiver } = await client();
    const requests = [0, 1, 2].map(() =>
      inRequestSpan(() =>
        c.rampart.middleware(fakeRequest('/wp-admin/', '192.0.2.10'), fakeResponse(), () => {}),
      ),
    );
    c.rampart.middleware(fakeRequest('/wp-admin/', '192.0.2.11'), fakeResponse(), () => {});
    await eventually('the batch', () => receiver.batches.length === 1);
    const events = receiver.batches[0]?.events ?? [];
    expect(events.map((e) => e.traceparent)).toEqual([
      ...requests.map((r) => `00-${r.spanContext().traceId}-${r.spanContext().spanId}-01`),
      null,
    ]);
    const flush = await eventually('the flush span', () =>
      spans.named('rampart.report.flush').at(0),
    );
    if (flush === undefined) throw new Error('unreachable: eventually returned');
    expect(flush.parentSpanContext).toBeUndefined();
    expect(flush.links.map((l) => l.context.traceId)).toEqual(
      requests.map((r) => r.spanContext().traceId),
    );
    expect(flush.attributes).toMatchObject({
      'rampart.report.events': 4,
      'rampart.report.outcome': 'sent',
      'rampart.report.batch_id': receiver.batches[0]?.batchId,
    });
  });
});

describe('batched evaluation', () => {
  it('continues each waiting request in the trace context it arrived in', async () => {
    const { client: c } = await client({ evaluation: 'batched' });
    const seen: { id: string; span: string | undefined }[] = [];
    const requestSpans: Span[] = [];
    await endOfTurn();
    for (const id of ['a', 'b', 'c', 'd']) {
      requestSpans.push(
        inRequestSpan(
          () =>
            handOver(c.rampart, '/products', {
              next: () =>
                seen.push({ id, span: trace.getSpan(context.active())?.spanContext().spanId }),
            }),
          true,
        ),
      );
    }
    await endOfTurn();
    for (const span of requestSpans) span.end();
    expect(seen.map((s) => s.id)).toEqual(['a', 'b', 'c', 'd']);
    for (const [i, s] of seen.entries()) expect(s.span).toBe(requestSpans[i]?.spanContext().spanId);
    // Each waiting request's decision went on its own request span too.
    for (const request of requestSpans) {
      const ended = spans
        .spans()
        .find((s) => s.spanContext().spanId === request.spanContext().spanId);
      expect(ended?.attributes['rampart.waf.action']).toBe('pass');
    }
  });
});

describe('sync and metrics', () => {
  it('records the snapshot swap as a span', async () => {
    await client();
    const swap = await eventually('the swap span', () =>
      spans.named('rampart.snapshot.swap').at(0),
    );
    if (swap === undefined) throw new Error('unreachable: eventually returned');
    expect(swap.parentSpanContext).toBeUndefined();
    expect(swap.attributes).toMatchObject({ 'rampart.snapshot.version': 4 });
  });

  it('exposes the counters as instruments, labelled by client', async () => {
    const { client: c } = await client();
    for (const path of ['/wp-admin/', '/wp-admin/', '/products'])
      c.rampart.middleware(fakeRequest(path), fakeResponse(), () => {});
    const decisions = await meters.metric('rampart.waf.decisions');
    const instance = c.rampart.config.instanceId;
    const ofClient = (decisions?.dataPoints ?? []).filter(
      (p) => p.attributes['rampart.client.instance'] === instance,
    );
    const byAction = Object.fromEntries(ofClient.map((p) => [p.attributes.action, p.value]));
    expect(byAction).toMatchObject({ block: 2, pass: 1 });
    expect(
      (await meters.metric('rampart.snapshot.version'))?.dataPoints.find(
        (p) => p.attributes['rampart.client.instance'] === instance,
      )?.value,
    ).toBe(4);
  });
});
