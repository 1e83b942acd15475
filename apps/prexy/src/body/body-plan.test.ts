import type { OutgoingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type PlanInput, planBody, substitutedHeaders } from './body-plan.js';

const base: PlanInput = {
  method: 'GET',
  requestHeaders: {},
  status: 200,
  responseHeaders: { 'content-type': 'text/html; charset=utf-8' },
  hasRules: true,
  contentTypes: ['text/html'],
};
const plan = (change: Partial<PlanInput>) => planBody({ ...base, ...change });

describe('planBody (SUBSTITUTION-SPEC 15-17)', () => {
  it('substitutes a configured media type, whatever its parameters and case', () => {
    expect(plan({})).toEqual({ substitute: true, from: 'identity', to: 'identity' });
    expect(plan({ responseHeaders: { 'content-type': 'TEXT/HTML' } }).substitute).toBe(true);
    expect(plan({ responseHeaders: { 'content-type': 'text/css' } }).substitute).toBe(false);
    expect(plan({ responseHeaders: {} }).substitute).toBe(false);
    expect(plan({ responseHeaders: {}, contentTypes: ['*'] }).substitute).toBe(true);
  });

  it('passes HEAD, ranges, bodiless and partial statuses, empty bodies and paths without rules', () => {
    expect(plan({ method: 'HEAD' }).substitute).toBe(false);
    expect(plan({ requestHeaders: { range: 'bytes=0-1' } }).substitute).toBe(false);
    for (const status of [101, 204, 206, 304]) expect(plan({ status }).substitute).toBe(false);
    expect(plan({ status: 404 }).substitute).toBe(true);
    expect(
      plan({ responseHeaders: { 'content-type': 'text/html', 'content-length': '0' } }).substitute,
    ).toBe(false);
    expect(plan({ hasRules: false }).substitute).toBe(false);
  });

  it('keeps the coding for a client that accepts it, else plans identity; unknown codings pass', () => {
    const gz = { 'content-type': 'text/html', 'content-encoding': 'gzip' };
    expect(
      plan({ responseHeaders: gz, requestHeaders: { 'accept-encoding': 'gzip, br' } }),
    ).toEqual({ substitute: true, from: 'gzip', to: 'gzip' });
    expect(plan({ responseHeaders: gz })).toEqual({
      substitute: true,
      from: 'gzip',
      to: 'identity',
    });
    const zstd = { 'content-type': 'text/html', 'content-encoding': 'zstd' };
    expect(plan({ responseHeaders: zstd }).substitute).toBe(false);
    const twice = { 'content-type': 'text/html', 'content-encoding': 'gzip, br' };
    expect(plan({ responseHeaders: twice }).substitute).toBe(false);
  });
});

/** Headers as undici hands them: a field sent on several lines is an array, whatever its type says. */
const several = (headers: Record<string, string | string[] | undefined>) =>
  headers as OutgoingHttpHeaders;

describe('substitutedHeaders', () => {
  const headers = {
    'content-length': '10',
    'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
    etag: '"abc"',
    'content-encoding': 'gzip',
  };

  it('drops Content-Length and Last-Modified, weakens a strong ETag, sets the coding sent', () => {
    expect(
      substitutedHeaders(headers, { substitute: true, from: 'gzip', to: 'identity' }, false),
    ).toEqual({
      etag: 'W/"abc"',
      vary: 'Accept-Encoding',
    });
    expect(
      substitutedHeaders(headers, { substitute: true, from: 'gzip', to: 'gzip' }, true),
    ).toEqual({
      'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
      etag: 'W/"abc"',
      'content-encoding': 'gzip',
      vary: 'Accept-Encoding',
    });
    expect(
      substitutedHeaders(
        { etag: 'W/"x"' },
        { substitute: true, from: 'identity', to: 'identity' },
        false,
      ).etag,
    ).toBe('W/"x"');
  });

  it('adds Accept-Encoding to Vary when the coding sent follows the client, and only then', () => {
    const decoded = { substitute: true, from: 'gzip', to: 'identity' } as const;
    const vary = (v: string | string[] | undefined) =>
      substitutedHeaders(several({ vary: v }), decoded, false).vary;
    expect(vary(undefined)).toBe('Accept-Encoding');
    expect(vary('Cookie')).toBe('Cookie, Accept-Encoding');
    expect(vary(['Cookie', 'accept-encoding'])).toBe('Cookie, accept-encoding');
    expect(vary('*')).toBe('*');
    const plain = { substitute: true, from: 'identity', to: 'identity' } as const;
    expect(substitutedHeaders({ vary: 'Cookie' }, plain, false).vary).toBe('Cookie');
    expect(substitutedHeaders({}, plain, false).vary).toBeUndefined();
  });

  it('weakens every ETag of a field sent on several lines', () => {
    const plain = { substitute: true, from: 'identity', to: 'identity' } as const;
    expect(substitutedHeaders(several({ etag: ['"a"', 'W/"b"'] }), plain, false).etag).toEqual([
      'W/"a"',
      'W/"b"',
    ]);
  });
});
