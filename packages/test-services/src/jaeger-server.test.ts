import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JaegerHandle, jaegerConfig, startJaeger } from './jaeger-server.js';

describe('jaegerConfig', () => {
  it('keeps traces in memory, listens on the given loopback ports, and turns its own metrics off', () => {
    const config = jaegerConfig({ host: '127.0.0.1', otlpHttp: 1, queryHttp: 2, queryGrpc: 3 });
    expect(config).toContain('endpoint: 127.0.0.1:1');
    expect(config).toContain('endpoint: 127.0.0.1:2');
    expect(config).toContain('memory:');
    expect(config).toMatch(/metrics:\n\s+level: none/);
  });
});

describe('a throwaway Jaeger', () => {
  let jaeger: JaegerHandle;
  beforeAll(async () => {
    jaeger = await startJaeger();
  }, 60_000);
  afterAll(async () => {
    await jaeger?.stop();
  });

  it('takes spans over OTLP/HTTP and answers them through its query API', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const now = Date.now();
    await jaeger.ingest([
      {
        service: 'shop',
        traceId,
        spanId: '00f067aa0ba902b7',
        name: 'GET /',
        startMs: now,
        durationMs: 3,
      },
      {
        service: 'shop',
        traceId,
        spanId: '00f067aa0ba902b8',
        parentSpanId: '00f067aa0ba902b7',
        name: 'db',
        startMs: now + 1,
        durationMs: 1,
        attributes: { rows: 3 },
      },
    ]);
    let trace = await jaeger.trace(traceId);
    for (let i = 0; i < 100 && trace === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      trace = await jaeger.trace(traceId);
    }
    expect(trace?.spans.map((s) => s.operationName).sort()).toEqual(['GET /', 'db']);
    const child = trace?.spans.find((s) => s.operationName === 'db');
    expect(child?.references).toContainEqual({
      refType: 'CHILD_OF',
      traceID: traceId,
      spanID: '00f067aa0ba902b7',
    });
    expect(child?.tags).toContainEqual(expect.objectContaining({ key: 'rows', value: 3 }));
    expect((await jaeger.traces('shop')).map((t) => t.traceID)).toContain(traceId);
    expect(await jaeger.trace('0123456789abcdef0123456789abcdef')).toBeUndefined();
  });
});
