/**
 * The request as the evaluator sees it, and the normalisation patterns are matched against.
 *
 * Attackers spell one path many ways (`/wp%2Dadmin`, `//wp-admin`, `/x/../wp-admin`); a rule
 * written for `/wp-admin` must catch all of them. Paths are therefore percent-decoded once and
 * their dot segments and repeated slashes resolved before matching. Values are computed lazily
 * and cached per request, so a rule set without path rules never pays for path normalisation.
 */

/** What the evaluator needs from an HTTP request; the middleware builds it. */
export interface RequestInfo {
  /** The client address as resolved by the caller (trusted-proxy logic lives in the client). */
  readonly ip: string;
  readonly method: string;
  /** The Host header (a port, if any, is ignored). */
  readonly host: string;
  /** The path as received, without the query string. */
  readonly path: string;
  /** The raw query string without the leading "?" ("" when absent). */
  readonly query: string;
  readonly userAgent: string;
  /** Headers that rules may name, with lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** Percent-decodes once (invalid escapes stay as written), then resolves `.`/`..` and `//`. */
export function normalizePath(path: string): string {
  let decoded = path;
  if (path.includes('%')) decoded = decodePercent(path);
  if (!decoded.includes('//') && !decoded.includes('/.')) return decoded;
  const out: string[] = [];
  const segments = decoded.split('/');
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i] as string;
    if (s === '..') out.pop();
    else if (s !== '.' && (s !== '' || i === segments.length - 1)) out.push(s);
  }
  const prefix = decoded.startsWith('/') ? '/' : '';
  return prefix + out.join('/');
}

function decodePercent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Malformed UTF-8 or a stray "%": decode the valid escapes byte by byte.
    return text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
}

/** Decodes a query string component (`+` is a space). */
export function decodeQuery(text: string): string {
  const plus = text.includes('+');
  if (!plus && !text.includes('%')) return text;
  return decodePercent(plus ? text.replace(/\+/g, ' ') : text);
}

/**
 * The decoded values of parameter `name` in a raw query string, in order. A hand-written scan:
 * `URLSearchParams` would allocate a parameter list per request even when one name is wanted.
 */
export function queryValues(query: string, name: string): string[] {
  const values: string[] = [];
  let from = 0;
  while (from <= query.length) {
    let end = query.indexOf('&', from);
    if (end === -1) end = query.length;
    const eq = query.indexOf('=', from);
    const keyEnd = eq === -1 || eq > end ? end : eq;
    if (decodeQuery(query.slice(from, keyEnd)) === name) {
      values.push(keyEnd === end ? '' : decodeQuery(query.slice(keyEnd + 1, end)));
    }
    from = end + 1;
  }
  return values;
}

/** Strips a port and lower-cases: `Example.COM:8080` -> `example.com`, `[::1]:80` -> `[::1]`. */
export function normalizeHost(host: string): string {
  let h = host;
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    if (close !== -1) h = h.slice(0, close + 1);
  } else {
    const colon = h.indexOf(':');
    if (colon !== -1) h = h.slice(0, colon);
  }
  return h.toLowerCase();
}

/** Lazily normalised, cached views of one request's fields. */
export class RequestView {
  private pathValue: string | undefined;
  private pathLower: string | undefined;
  private queryValue: string | undefined;
  private queryLower: string | undefined;
  private uaLower: string | undefined;
  private hostValue: string | undefined;
  private methodValue: string | undefined;

  constructor(readonly request: RequestInfo) {}

  path(): string {
    if (this.pathValue === undefined) this.pathValue = normalizePath(this.request.path);
    return this.pathValue;
  }

  pathLowerCase(): string {
    if (this.pathLower === undefined) this.pathLower = this.path().toLowerCase();
    return this.pathLower;
  }

  query(): string {
    if (this.queryValue === undefined) this.queryValue = decodeQuery(this.request.query);
    return this.queryValue;
  }

  queryLowerCase(): string {
    if (this.queryLower === undefined) this.queryLower = this.query().toLowerCase();
    return this.queryLower;
  }

  /** Decoded values of one query parameter (empty when absent). */
  queryParam(name: string): string[] {
    return queryValues(this.request.query, name);
  }

  userAgentLowerCase(): string {
    if (this.uaLower === undefined) this.uaLower = this.request.userAgent.toLowerCase();
    return this.uaLower;
  }

  host(): string {
    if (this.hostValue === undefined) this.hostValue = normalizeHost(this.request.host);
    return this.hostValue;
  }

  method(): string {
    if (this.methodValue === undefined) this.methodValue = this.request.method.toUpperCase();
    return this.methodValue;
  }

  header(name: string): string | undefined {
    return this.request.headers[name];
  }
}
