/**
 * prexy's stage spans, read through the SDK's in-memory exporter: made from the times
 * `StageTimings` measured, under the request's span, only when that span records.
 */
import { context, type Span, TraceFlags, trace } from '@opentelemetry/api';
import { recordSpans, type SpanRecorder } from '@rampart/test-services/span-recorder';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StageTimings } from '../timing/stage-timings.js';
import { recordStages, tracedRequest } from './proxy-spans.js';

let spans: SpanRecorder;
beforeAll(() => {
  spans = recordSpans();
});
afterAll(async () => {
  await spans.close();
});
afterEach(() => spans.reset());

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/** A response's stages, a few ms each, as the proxy marks them. */
function timedResponse(): StageTimings {
  const timings = new StageTimings();
  timings.markDispatched();
  busy(2);
  timings.markWritten();
  busy(3);
  timings.markHeaders();
  timings.substitutionMs = 0.7;
  busy(2);
  return timings;
}

const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;

describe('recordStages', () => {
  it('makes the three stage spans under the request span, timed as measured', () => {
    const request: Span = trace.getTracer('test').startSpan('GET');
    const parent = context.with(trace.setSpan(context.active(), request), () => tracedRequest());
    expect(parent).toBeDefined();
    const timings = timedResponse();
    recordStages(parent as NonNullable<typeof parent>, {
      timings,
      endedAt: performance.now(),
      error: undefined,
      substitution: {
        rules: 'narrowed',
        ruleSet: 'abc',
        matches: 12,
        bytesIn: 10_000,
        bytesOut: 10_240,
        bufferLimitHit: false,
      },
    });
    request.end();
    const names = ['prexy.upstream.connect', 'prexy.upstream.headers', 'prexy.substitution'];
    const stages = names.map((name) => spans.named(name)[0]);
    for (const stage of stages)
      expect(stage?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    const [connect, headers, substitution] = stages;
    const duration = (s: typeof connect) => ms(s?.duration as [number, number]);
    expect(duration(connect)).toBeGreaterThanOrEqual(1.9);
    expect(duration(headers)).toBeGreaterThanOrEqual(2.9);
    expect(duration(substitution)).toBeGreaterThanOrEqual(1.9);
    expect(ms(headers?.startTime as [number, number])).toBeCloseTo(
      ms(connect?.endTime as [number, number]),
      1,
    );
    expect(substitution?.attributes).toMatchObject({
      'prexy.rules.run': 'narrowed',
      'prexy.rules.set': 'abc',
      'prexy.substitution.matches': 12,
      'prexy.substitution.bytes_in': 10_000,
      'prexy.substitution.bytes_out': 10_240,
      'prexy.substitution.engine_ms': 0.7,
      'prexy.substitution.buffer_limit_hit': false,
    });
  });

  it('makes no substitution span for a response that was not substituted', () => {
    const request = trace.getTracer('test').startSpan('GET');
    const parent = context.with(trace.setSpan(context.active(), request), () => tracedRequest());
    recordStages(parent as NonNullable<typeof parent>, {
      timings: timedResponse(),
      endedAt: performance.now(),
      error: undefined,
      substitution: undefined,
    });
    expect(
      spans
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['prexy.upstream.connect', 'prexy.upstream.headers']);
  });
});

describe('tracedRequest', () => {
  it('is the context only when the request span records', () => {
    expect(tracedRequest()).toBeUndefined();
    const unsampled = trace.wrapSpanContext({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
    });
    expect(
      context.with(trace.setSpan(context.active(), unsampled), () => tracedRequest()),
    ).toBeUndefined();
  });
});
