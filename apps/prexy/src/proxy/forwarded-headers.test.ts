import { describe, expect, it } from 'vitest';
import {
  appendFieldValue,
  downstreamResponseHeaders,
  endToEnd,
  upstreamRequestHeaders,
} from './forwarded-headers.js';

const client = { address: '198.51.100.7', host: 'shop.test', proto: 'http' as const };

describe('hop-by-hop fields (RFC 9110 7.6.1)', () => {
  it('drops the fixed list and every field Connection names, in both directions', () => {
    const headers = {
      connection: 'X-Secret, close',
      'x-secret': '1',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x',
      'transfer-encoding': 'chunked',
      upgrade: 'websocket',
      'proxy-authorization': 'Basic x',
      'content-type': 'text/html',
    };
    expect(endToEnd(headers)).toEqual({ 'content-type': 'text/html' });
    expect(downstreamResponseHeaders({ ...headers, 'proxy-authenticate': 'Basic' })).toEqual({
      'content-type': 'text/html',
    });
  });
});

describe('upstreamRequestHeaders', () => {
  it('sets the upstream Host and adds Forwarded and X-Forwarded-*', () => {
    const out = upstreamRequestHeaders({ host: 'shop.test', accept: '*/*' }, client, 'origin:3000');
    expect(out).toEqual({
      host: 'origin:3000',
      accept: '*/*',
      forwarded: 'for=198.51.100.7;host="shop.test";proto=http',
      'x-forwarded-for': '198.51.100.7',
      'x-forwarded-host': 'shop.test',
      'x-forwarded-proto': 'http',
    });
  });

  it("appends to an earlier proxy's fields", () => {
    const out = upstreamRequestHeaders(
      { forwarded: 'for=203.0.113.1', 'x-forwarded-for': '203.0.113.1' },
      client,
      'o',
    );
    expect(out.forwarded).toBe('for=203.0.113.1, for=198.51.100.7;host="shop.test";proto=http');
    expect(out['x-forwarded-for']).toBe('203.0.113.1, 198.51.100.7');
  });

  it('brackets and quotes IPv6 in Forwarded (RFC 7239 6), unwraps IPv4-mapped addresses', () => {
    const v6 = upstreamRequestHeaders({}, { ...client, address: '2001:db8::1' }, 'o');
    expect(v6.forwarded).toBe('for="[2001:db8::1]";host="shop.test";proto=http');
    expect(v6['x-forwarded-for']).toBe('2001:db8::1');
    const mapped = upstreamRequestHeaders({}, { ...client, address: '::ffff:192.0.2.5' }, 'o');
    expect(mapped['x-forwarded-for']).toBe('192.0.2.5');
  });
});

describe('appendFieldValue', () => {
  it('joins list values with ", "', () => {
    expect(appendFieldValue(undefined, 'b')).toBe('b');
    expect(appendFieldValue('a', 'b')).toBe('a, b');
    expect(appendFieldValue(['a', 'c'], 'b')).toBe('a, c, b');
  });
});
