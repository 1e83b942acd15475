/**
 * The request target and host of an incoming request (RFC 9112 section 3.2), reduced to what
 * prexy may forward. The upstream is only ever the configured route's: a request names a host,
 * and only a configured host is served, so prexy can never be used as an open proxy.
 *
 * - origin-form (`/path?q`): the host is the `Host` header.
 * - absolute-form (`http://host/path`): the host is the target's authority (RFC 9112 3.2.2 says
 *   `Host` is then ignored); it must be a configured host like any other.
 * - asterisk-form (`*`) is only for `OPTIONS`, answered by prexy itself; authority-form
 *   (`CONNECT host:port`) is refused: prexy does not tunnel.
 */

export type RequestTarget =
  | { readonly kind: 'forward'; readonly host: string; readonly path: string }
  | { readonly kind: 'options-asterisk' }
  | { readonly kind: 'refuse'; readonly status: 400 | 405; readonly reason: string };

/** Host names compare lowercased; a default port is dropped (`example.com:80` = `example.com`). */
export function normaliseHost(host: string, secure: boolean): string {
  const lower = host.trim().toLowerCase();
  const defaultPort = secure ? ':443' : ':80';
  return lower.endsWith(defaultPort) ? lower.slice(0, -defaultPort.length) : lower;
}

/** Classifies `url` (the raw request target) of a request with `method` and `Host` header. */
export function requestTarget(
  method: string,
  url: string,
  hostHeader: string | undefined,
  secure = false,
): RequestTarget {
  if (method === 'CONNECT') {
    return {
      kind: 'refuse',
      status: 405,
      reason: 'CONNECT is not supported: this is no forward proxy',
    };
  }
  if (url === '*') {
    if (method === 'OPTIONS') return { kind: 'options-asterisk' };
    return { kind: 'refuse', status: 400, reason: 'the target "*" is only for OPTIONS' };
  }
  if (url.startsWith('/')) {
    if (hostHeader === undefined || hostHeader === '') {
      return { kind: 'refuse', status: 400, reason: 'the Host header is missing' };
    }
    if (/[\s/@?#]/.test(hostHeader)) {
      return { kind: 'refuse', status: 400, reason: 'the Host header is not a host name' };
    }
    return { kind: 'forward', host: normaliseHost(hostHeader, secure), path: url };
  }
  const scheme = /^(https?):\/\//i.exec(url);
  if (scheme === null) {
    return {
      kind: 'refuse',
      status: 400,
      reason: 'the request target is not a path or an http URL',
    };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'refuse', status: 400, reason: 'the request target is not a valid URL' };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { kind: 'refuse', status: 400, reason: 'the request target carries credentials' };
  }
  const rest = url.slice(scheme[0].length);
  const pathAt = rest.search(/[/?]/);
  const path =
    pathAt < 0 ? '/' : rest[pathAt] === '?' ? `/${rest.slice(pathAt)}` : rest.slice(pathAt);
  return {
    kind: 'forward',
    host: normaliseHost(parsed.host, parsed.protocol === 'https:'),
    path,
  };
}

/** The path without its query: what rule-set prefixes are matched against. */
export function pathOf(target: string): string {
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}
