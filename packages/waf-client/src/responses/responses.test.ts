import { describe, expect, it } from 'vitest';
import { rateLimitHeaders, rateLimitRefusal } from './responses.js';

const info = { ruleId: 'login', limit: 10, remaining: 3, windowSeconds: 60, resetSeconds: 42 };

describe('rate-limit headers', () => {
  it('name the rule, its quota and window, and what is left until when', () => {
    expect(rateLimitHeaders(info)).toEqual({
      'ratelimit-policy': '"login";q=10;w=60',
      ratelimit: '"login";r=3;t=42',
    });
  });

  it('follow a rule whose limit or window changed under the same id', () => {
    rateLimitHeaders(info);
    expect(rateLimitHeaders({ ...info, limit: 20 })['ratelimit-policy']).toBe('"login";q=20;w=60');
    expect(rateLimitHeaders({ ...info, windowSeconds: 30 })['ratelimit-policy']).toBe(
      '"login";q=10;w=30',
    );
  });

  it('escape quotes and backslashes in a rule id', () => {
    expect(rateLimitHeaders({ ...info, ruleId: 'a"b\\c' }).ratelimit).toBe('"a\\"b\\\\c";r=3;t=42');
  });

  it('go on a 429 with Retry-After and the request id', () => {
    const refusal = rateLimitRefusal({ ...info, remaining: 0 }, 'req-1');
    expect(refusal.status).toBe(429);
    expect(refusal.headers).toMatchObject({
      'retry-after': '42',
      ratelimit: '"login";r=0;t=42',
      'ratelimit-policy': '"login";q=10;w=60',
      'x-request-id': 'req-1',
    });
  });
});
