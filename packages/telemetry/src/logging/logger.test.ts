import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { recordSpans, type SpanRecorder } from '@rampart/test-services/span-recorder';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, REDACTED, scrubSecret } from './logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'rampart-hub', destination }) };
}

let spans: SpanRecorder;
beforeAll(() => {
  spans = recordSpans();
});
afterAll(async () => {
  await spans.close();
});

describe('createLogger', () => {
  it('writes one JSON object per line with time, level, service and message', () => {
    const { lines, logger } = capture();
    logger.info({ site: 3 }, 'snapshot built');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({
      level: 'info',
      service: 'rampart-hub',
      site: 3,
      message: 'snapshot built',
    });
    expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(line.trace_id).toBeUndefined();
  });

  it('puts the active span’s trace and span ids on every line, children included', () => {
    const { lines, logger } = capture();
    const tracer = trace.getTracer('test');
    let ids = { traceId: '', spanId: '' };
    tracer.startActiveSpan('ingest', (span) => {
      ids = span.spanContext();
      logger.warn('slow batch');
      logger.child({ component: 'store' }).info('written');
      span.end();
    });
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(a).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '01' });
    expect(b).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, component: 'store' });
  });

  it('never writes the fields that carry secrets, at any of the usual depths', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        authorization: 'Bearer top-secret-1',
        req: { headers: { authorization: 'Bearer top-secret-2', cookie: 'sid=top-secret-3' } },
        siteKey: 'top-secret-4',
        config: { adminToken: 'top-secret-5', password: 'top-secret-6' },
        res: { headers: { 'set-cookie': 'sid=top-secret-7' } },
      },
      'request',
    );
    const text = lines.join('\n');
    expect(text).not.toMatch(/top-secret/);
    expect(JSON.parse(lines[0] as string).req.headers.authorization).toBe(REDACTED);
  });
});

describe('scrubSecret', () => {
  it('replaces every occurrence of a known secret in free text', () => {
    expect(scrubSecret('key abc failed; abc again', 'abc')).toBe(
      `key ${REDACTED} failed; ${REDACTED} again`,
    );
    expect(scrubSecret('nothing', undefined)).toBe('nothing');
    expect(scrubSecret('nothing', '')).toBe('nothing');
  });
});
