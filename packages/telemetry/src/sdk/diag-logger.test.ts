import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/logger.js';
import { ThrottledDiagLogger } from './diag-logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'test', destination }) };
}

describe('ThrottledDiagLogger', () => {
  it('writes each kind of SDK message once per interval, counting what it held back', async () => {
    const { lines, logger } = capture();
    let now = 0;
    const diag = new ThrottledDiagLogger(logger, 60_000, () => now);
    diag.warn('Dropped 3 spans because maxQueueSize reached');
    diag.warn('Dropped 7 spans because maxQueueSize reached');
    diag.error('{"stack":"Error: connect ECONNREFUSED"}', new Error('connect ECONNREFUSED'));
    now = 61_000;
    diag.warn('Dropped 9 spans because maxQueueSize reached');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.level, l.message, l.heldBack, l.detail])).toEqual([
      ['warn', 'Dropped 3 spans because maxQueueSize reached', undefined, undefined],
      ['error', '{"stack":"Error: connect ECONNREFUSED"}', undefined, 'connect ECONNREFUSED'],
      ['warn', 'Dropped 9 spans because maxQueueSize reached', 1, undefined],
    ]);
    expect(lines.every((l) => l.component === 'opentelemetry')).toBe(true);
  });

  it('takes an error where its type says a string (some SDK components pass one)', async () => {
    const { lines, logger } = capture();
    const diag = new ThrottledDiagLogger(logger);
    (diag.error as (message: unknown) => void)(new Error('listen EADDRINUSE 127.0.0.1:9464'));
    (diag.warn as (message: unknown) => void)(undefined);
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.message)).toEqual(['listen EADDRINUSE 127.0.0.1:9464', '']);
  });
});
