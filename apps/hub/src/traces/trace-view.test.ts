import { describe, expect, it } from 'vitest';
import { type JaegerTraceJson, traceView } from './trace-view.js';

const T = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const span = (
  spanID: string,
  operationName: string,
  startTime: number,
  duration: number,
  extra: Partial<JaegerTraceJson['spans'][number]> = {},
) => ({ spanID, operationName, startTime, duration, processID: 'p1', ...extra });

describe('traceView', () => {
  const json: JaegerTraceJson = {
    traceID: T,
    processes: { p1: { serviceName: 'rampart-client-demo' }, p2: { serviceName: 'rampart-prexy' } },
    spans: [
      span('02', 'rampart.waf.evaluate', 1_700_000_000_000_300, 20, {
        references: [{ refType: 'CHILD_OF', traceID: T, spanID: '01' }],
        tags: [
          { key: 'rampart.waf.action', value: 'block' },
          { key: 'internal.detail', value: 'not shown' },
        ],
      }),
      span('01', 'GET', 1_700_000_000_000_000, 4200, {
        processID: 'p2',
        references: [{ refType: 'CHILD_OF', traceID: T, spanID: 'ff' }], // parent not in the trace
        tags: [{ key: 'otel.status_code', value: 'ERROR' }],
      }),
      span('03', 'process report-ingest', 1_700_000_000_010_000, 1000, {
        references: [{ refType: 'FOLLOWS_FROM', traceID: 'other', spanID: '09' }],
      }),
    ],
  };

  it('orders spans by start, with offsets and durations in ms from the first start', () => {
    const view = traceView(json, 'http://jaeger.example:16686/');
    expect(view.spans.map((s) => [s.name, s.startMs, s.durationMs])).toEqual([
      ['GET', 0, 4.2],
      ['rampart.waf.evaluate', 0.3, 0.02],
      ['process report-ingest', 10, 1],
    ]);
    expect(view.durationMs).toBe(11);
    expect(view.startTime).toBe(new Date(1_700_000_000_000).toISOString());
    expect(view.jaegerUrl).toBe(`http://jaeger.example:16686/trace/${T}`);
  });

  it('names parents only within the trace, services by process, errors and a few attributes', () => {
    const [root, evaluate, job] = traceView(json, null).spans;
    expect(root).toMatchObject({ parentSpanId: null, service: 'rampart-prexy', error: true });
    expect(evaluate).toMatchObject({
      parentSpanId: '01',
      service: 'rampart-client-demo',
      error: false,
      attributes: { 'rampart.waf.action': 'block' },
    });
    expect(job?.parentSpanId).toBeNull(); // a link is not a parent
    expect(traceView(json, null).jaegerUrl).toBeNull();
  });
});
