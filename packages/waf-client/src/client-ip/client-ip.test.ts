import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
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

describe('resolveClientIp on keep-alive connections', () => {
  /** Requests that share one socket object, as on a keep-alive connection. */
  function onSocket(socket: { remoteAddress?: string }, forwardedFor?: string): IncomingMessage {
    return {
      socket,
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    } as unknown as IncomingMessage;
  }

  it('answers each request of a connection on its own header', () => {
    const socket = { remoteAddress: '10.0.0.1' };
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), proxies)).toBe('198.51.100.1');
    expect(resolveClientIp(onSocket(socket, '198.51.100.2'), proxies)).toBe('198.51.100.2');
    expect(resolveClientIp(onSocket(socket), proxies)).toBe('10.0.0.1');
  });

  it('does not carry one trusted-proxy set over to another', () => {
    const socket = { remoteAddress: '10.0.0.1' };
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), proxies)).toBe('198.51.100.1');
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), new TrustedProxies([]))).toBe(
      '10.0.0.1',
    );
    expect(
      resolveClientIp(onSocket(socket, '198.51.100.1'), new TrustedProxies(['192.0.2.0/24'])),
    ).toBe('10.0.0.1');
  });

  it('remembers a header per trusted-proxy set, and never one trusted peer for another', () => {
    const narrow = new TrustedProxies(['10.0.0.0/8']);
    const wide = new TrustedProxies(['10.0.0.0/8', '198.51.100.0/24']);
    const header = '203.0.113.1, 198.51.100.1';
    for (let i = 0; i < 2; i++) {
      expect(resolveClientIp(onSocket({ remoteAddress: '10.0.0.1' }, header), narrow)).toBe(
        '198.51.100.1',
      );
      expect(resolveClientIp(onSocket({ remoteAddress: '10.0.0.1' }, header), wide)).toBe(
        '203.0.113.1',
      );
    }
    // a header that names no client: each trusted peer that sent it is the client
    expect(resolveClientIp(onSocket({ remoteAddress: '10.0.0.1' }, 'garbage'), narrow)).toBe(
      '10.0.0.1',
    );
    expect(resolveClientIp(onSocket({ remoteAddress: '10.0.0.2' }, 'garbage'), narrow)).toBe(
      '10.0.0.2',
    );
  });

  it('notices a socket object that now reports another peer', () => {
    const socket: { remoteAddress?: string } = { remoteAddress: '10.0.0.1' };
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), proxies)).toBe('198.51.100.1');
    socket.remoteAddress = '203.0.113.9';
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), proxies)).toBe('203.0.113.9');
    socket.remoteAddress = undefined; // destroyed sockets report none
    expect(resolveClientIp(onSocket(socket, '198.51.100.1'), proxies)).toBe('');
  });
});

describe('resolveClientIp, property', () => {
  /** The rule of the module comment, written plainly: every entry parsed on its own. */
  function reference(remote: string, header: string | undefined, trusted: TrustedProxies): string {
    const peer = normalizeIp(remote);
    const isTrusted = (a: string) => a !== '' && trusted.classify(a).trusted;
    if (header === undefined || !isTrusted(peer)) return peer;
    let client = peer;
    const entries = header.split(',').slice(-32).reverse();
    for (const [i, raw] of entries.entries()) {
      let entry = raw.trim();
      const port = /^\[(.*)\](:\d+)?$/.exec(entry) ?? /^([\d.]+):\d+$/.exec(entry);
      if (port) entry = port[1] as string;
      if (entry === '' && i < entries.length - 1) continue;
      const address = normalizeIp(entry);
      if (address === '') return client;
      client = address;
      if (!isTrusted(address)) return client;
    }
    return client;
  }

  const address = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom('10.0.0.1', '10.200.0.9', '127.0.0.1', '2001:db8:1::7', '::ffff:10.1.1.1'),
  );
  const entry = fc.oneof(
    { weight: 6, arbitrary: address },
    { weight: 1, arbitrary: fc.ipV4().map((a) => `${a}:8080`) },
    { weight: 1, arbitrary: fc.ipV6().map((a) => `[${a}]:443`) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'unknown', '1.2.3', '999.1.1.1') },
  );

  it('matches the plain rule for any peer, header and trusted set', () => {
    const sets = [proxies, new TrustedProxies([]), new TrustedProxies(['0.0.0.0/0', '::/0'])];
    fc.assert(
      fc.property(
        address,
        fc.option(fc.array(entry, { maxLength: 40 }), { nil: undefined }),
        fc.constantFrom(...sets),
        fc.boolean(),
        (remote, entries, trusted, sameSocket) => {
          const header = entries?.join(sameSocket ? ',' : ', ');
          const socket = { remoteAddress: remote };
          const req = () =>
            ({
              socket,
              headers: header === undefined ? {} : { 'x-forwarded-for': header },
            }) as unknown as IncomingMessage;
          const expected = reference(remote, header, trusted);
          expect(resolveClientIp(req(), trusted)).toBe(expected);
          // a second request on the same connection: the cached peer gives the same answer
          expect(resolveClientIp(req(), trusted)).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
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
