/**
 * The request target as prexy reads it (RFC 9112 3.2): which host a request names and which
 * path goes upstream. Only a configured host is ever served, so what matters here is that the
 * host is the one the request really names (never something a client can smuggle past the
 * route lookup) and that the path goes upstream as the client sent it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseHost, pathOf, requestTarget } from './request-target.js';

/** A path and query as a client would send them in origin-form (starting with `/`). */
const originForm = fc
  .tuple(fc.webPath(), fc.option(fc.webQueryParameters(), { nil: undefined }))
  .map(([path, query]) => `/${path.replace(/^\/+/, '')}${query === undefined ? '' : `?${query}`}`);

/** A host with or without a port, in any letter case. */
const authority = fc
  .tuple(
    fc.domain(),
    fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
    fc.boolean(),
  )
  .map(([domain, port, upper]) => {
    const host = upper ? domain.toUpperCase() : domain;
    return port === undefined ? host : `${host}:${port}`;
  });

describe('normaliseHost', () => {
  it('lowercases and drops the default port of the scheme, and only that one', () => {
    expect(normaliseHost('Shop.Test', false)).toBe('shop.test');
    expect(normaliseHost('shop.test:80', false)).toBe('shop.test');
    expect(normaliseHost('shop.test:443', true)).toBe('shop.test');
    expect(normaliseHost('shop.test:443', false)).toBe('shop.test:443');
    expect(normaliseHost('shop.test:80', true)).toBe('shop.test:80');
    expect(normaliseHost('shop.test:8080', false)).toBe('shop.test:8080');
    expect(normaliseHost(' shop.test ', false)).toBe('shop.test');
    expect(normaliseHost('[::1]:80', false)).toBe('[::1]');
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(authority, fc.boolean(), (host, secure) => {
        const once = normaliseHost(host, secure);
        expect(normaliseHost(once, secure)).toBe(once);
      }),
    );
  });
});

describe('origin-form targets (/path?query)', () => {
  it('take the host from the Host header and keep the target as the path', () => {
    expect(requestTarget('GET', '/a/b?c=d', 'Shop.Test:80')).toEqual({
      kind: 'forward',
      host: 'shop.test',
      path: '/a/b?c=d',
    });
    expect(requestTarget('GET', '/', 'shop.test:443', true)).toEqual({
      kind: 'forward',
      host: 'shop.test',
      path: '/',
    });
  });

  it('forward any path unchanged, with the Host header normalised', () => {
    fc.assert(
      fc.property(originForm, authority, fc.constantFrom('GET', 'POST', 'HEAD'), (t, h, m) => {
        expect(requestTarget(m, t, h)).toEqual({
          kind: 'forward',
          host: normaliseHost(h, false),
          path: t,
        });
      }),
    );
  });

  it('are refused (400) without a Host header or with one that is not a host name', () => {
    for (const host of [undefined, '', 'a b', 'shop.test/x', 'user@shop.test', 'shop.test?x']) {
      const target = requestTarget('GET', '/', host);
      expect(target.kind, String(host)).toBe('refuse');
      if (target.kind === 'refuse') expect(target.status).toBe(400);
    }
  });
});

describe('absolute-form targets (http://host/path)', () => {
  it('take the host from the target, whatever the Host header says (RFC 9112 3.2.2)', () => {
    expect(requestTarget('GET', 'http://Other.Test:80/x?y', 'shop.test')).toEqual({
      kind: 'forward',
      host: 'other.test',
      path: '/x?y',
    });
    expect(requestTarget('GET', 'HTTPS://shop.test:443/', undefined)).toEqual({
      kind: 'forward',
      host: 'shop.test',
      path: '/',
    });
  });

  it('send "/" for an empty path, keeping a query that follows the authority', () => {
    expect(requestTarget('GET', 'http://shop.test', undefined)).toMatchObject({ path: '/' });
    expect(requestTarget('GET', 'http://shop.test?q=1', undefined)).toMatchObject({
      path: '/?q=1',
    });
  });

  it('name the host the URL parser sees, and forward the path as sent', () => {
    fc.assert(
      fc.property(authority, originForm, fc.boolean(), (host, path, withPath) => {
        const url = `http://${host}${withPath ? path : ''}`;
        const target = requestTarget('GET', url, 'unrelated.test');
        expect(target).toEqual({
          kind: 'forward',
          host: normaliseHost(new URL(url).host, false),
          path: withPath ? path : '/',
        });
      }),
    );
  });

  it('are refused when they carry credentials, are not http(s) or are not URLs', () => {
    for (const url of [
      'http://user:pw@shop.test/',
      'http://user@shop.test/',
      'ftp://shop.test/',
      'shop.test/path',
      'http://[bad/',
      '',
    ]) {
      const target = requestTarget('GET', url, 'shop.test');
      expect(target.kind, url).toBe('refuse');
      if (target.kind === 'refuse') expect(target.status).toBe(400);
    }
  });
});

describe('other forms', () => {
  it('refuse CONNECT with 405: prexy does not tunnel', () => {
    const target = requestTarget('CONNECT', 'shop.test:443', 'shop.test:443');
    expect(target).toMatchObject({ kind: 'refuse', status: 405 });
  });

  it('answer "*" only for OPTIONS', () => {
    expect(requestTarget('OPTIONS', '*', 'shop.test')).toEqual({ kind: 'options-asterisk' });
    expect(requestTarget('GET', '*', 'shop.test')).toMatchObject({ kind: 'refuse', status: 400 });
  });
});

describe('pathOf', () => {
  it('is the target without its query', () => {
    expect(pathOf('/a/b?c=d?e')).toBe('/a/b');
    expect(pathOf('/a/b')).toBe('/a/b');
    expect(pathOf('/?x')).toBe('/');
    fc.assert(
      fc.property(originForm, (t) => {
        const path = pathOf(t);
        expect(t.startsWith(path)).toBe(true);
        expect(path.includes('?')).toBe(false);
      }),
    );
  });
});
