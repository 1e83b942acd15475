import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { normalizeIp, resolveClientIp } from './client-ip.js';
import { TrustedProxies } from './trusted-proxies.js';

function request(remoteAddress: string, forwardedFor?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

const proxies = new TrustedProxies(['10.0.0.0/8', '2001:db8:1::/48', '127.0.0.1']);

describe('resolveClientIp', () => {
  it('ignores X-Forwarded-For from an untrusted peer (spoofing)', () => {
    expect(resolveClientIp(request('203.0.113.9', '198.51.100.1'), proxies)).toBe('203.0.113.9');
    expect(resolveClientIp(request('203.0.113.9', '10.0.0.1'), proxies)).toBe('203.0.113.9');
    // and with no trusted proxies at all, it is never read
    expect(resolveClientIp(request('10.0.0.2', '198.51.100.1'), new TrustedProxies([]))).toBe(
      '10.0.0.2',
    );
  });

  it('walks the list right to left from a trusted peer, skipping trusted hops', () => {
    // the client put a fake address first; proxies appended the real chain
    const header = '1.1.1.1, 198.51.100.7, 10.1.2.3';
    expect(resolveClientIp(request('10.0.0.1', header), proxies)).toBe('198.51.100.7');
    expect(resolveClientIp(request('::ffff:10.0.0.1', header), proxies)).toBe('198.51.100.7');
    // repeated headers are joined by node; the rightmost entries still decide
    expect(resolveClientIp(request('10.0.0.1', ['1.1.1.1', '198.51.100.8']), proxies)).toBe(
      '198.51.100.8',
    );
  });

  it('takes the leftmost entry when every hop is trusted', () => {
    expect(resolveClientIp(request('10.0.0.1', '10.9.9.9, 10.1.1.1'), proxies)).toBe('10.9.9.9');
  });

  it('stops at the last trusted hop on a malformed entry', () => {
    expect(resolveClientIp(request('10.0.0.1', '198.51.100.7, not-an-ip'), proxies)).toBe(
      '10.0.0.1',
    );
    expect(resolveClientIp(request('10.0.0.1', '198.51.100.7, garbage, 10.2.2.2'), proxies)).toBe(
      '10.2.2.2',
    );
    expect(resolveClientIp(request('10.0.0.1', ''), proxies)).toBe('10.0.0.1');
  });

  it('accepts ports and bracketed IPv6 in entries', () => {
    expect(resolveClientIp(request('10.0.0.1', '198.51.100.7:4711'), proxies)).toBe('198.51.100.7');
    expect(resolveClientIp(request('10.0.0.1', '[2001:DB8:2::0001]:443'), proxies)).toBe(
      '2001:db8:2::1',
    );
  });

  it('handles IPv6 clients and IPv6 proxies, in canonical form', () => {
    expect(resolveClientIp(request('2001:db8:2:0:0:0:0:1'), proxies)).toBe('2001:db8:2::1');
    expect(resolveClientIp(request('2001:db8:1::5', '2001:db8:2::1'), proxies)).toBe(
      '2001:db8:2::1',
    );
    expect(resolveClientIp(request('2001:db8:1::5', '203.0.113.5, 2001:db8:1::6'), proxies)).toBe(
      '203.0.113.5',
    );
    // the peer 2001:db8:2::1 is not trusted: its header is ignored
    expect(resolveClientIp(request('2001:db8:2::1', '203.0.113.5'), proxies)).toBe('2001:db8:2::1');
  });
});

describe('normalizeIp', () => {
  it('makes IPv4-mapped IPv6 the IPv4 address and keeps IPv4-compatible IPv6 as IPv6', () => {
    expect(normalizeIp('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeIp('::FFFF:0102:0304')).toBe('1.2.3.4');
    expect(normalizeIp('::102:305')).toBe('::102:305');
    expect(normalizeIp('2600:1F18:0000:3D00:0000:0000:0000:0001')).toBe('2600:1f18:0:3d00::1');
    expect(normalizeIp('nonsense')).toBe('');
  });
});
