import { describe, expect, it } from 'vitest';
import { RampartInfo } from './request-info.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMINGS = { resolveIpMs: 0.01, evaluateMs: 0.02 };

describe('RampartInfo', () => {
  it('uses a well-formed incoming X-Request-Id as the request id', () => {
    const info = new RampartInfo('lb-7f3a:42', null, '192.0.2.1', 'enforce', TIMINGS);
    expect(info.requestId).toBe('lb-7f3a:42');
  });

  it('makes a new UUID when the header is missing, malformed or repeated, the same on every read', () => {
    for (const header of [undefined, '<script>', '', 'x'.repeat(129), ['a', 'b']]) {
      const info = new RampartInfo(header, null, '192.0.2.1', 'enforce', TIMINGS);
      const first = info.requestId;
      expect(first).toMatch(UUID);
      expect(info.requestId).toBe(first);
    }
    const a = new RampartInfo(undefined, null, '', 'off', TIMINGS);
    const b = new RampartInfo(undefined, null, '', 'off', TIMINGS);
    expect(a.requestId).not.toBe(b.requestId);
  });

  it('serialises as the plain object an app logs, request id included', () => {
    const info = new RampartInfo(undefined, null, '2001:db8::1', 'monitor', TIMINGS);
    const logged = JSON.parse(JSON.stringify(info)) as Record<string, unknown>;
    expect(logged).toEqual({
      requestId: info.requestId,
      decision: null,
      clientIp: '2001:db8::1',
      mode: 'monitor',
      timings: TIMINGS,
    });
  });
});
