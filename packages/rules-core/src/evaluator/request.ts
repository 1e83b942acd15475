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
  if (isPlainPath(path)) return path; // the common case, in one scan and no allocation
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

const PERCENT = 37;
const SLASH = 47;
const DOT = 46;
const PLUS = 43;

/** True when a path has no escape, no `//` and no `/.`, so normalising would not change it. */
function isPlainPath(path: string): boolean {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === PERCENT) return false;
    if (c === SLASH) {
      const next = path.charCodeAt(i + 1);
      if (next === SLASH || next === DOT) return false;
    }
  }
  return true;
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
 * The decoded values of parameter `name` in a raw query string, in order. A hand-written scan
 * that compares keys in place: `URLSearchParams` (or slicing every key) would allocate per
 * parameter on every request, although rules want one name.
 */
export function queryValues(query: string, name: string): string[] {
  const values: string[] = [];
  let from = 0;
  while (from < query.length) {
    let end = query.indexOf('&', from);
    if (end === -1) end = query.length;
    let keyEnd = query.indexOf('=', from);
    if (keyEnd === -1 || keyEnd > end) keyEnd = end;
    if (keyMatches(query, from, keyEnd, name)) {
      values.push(keyEnd === end ? '' : decodeQuery(query.slice(keyEnd + 1, end)));
    }
    from = end + 1;
  }
  return values;
}

function keyMatches(query: string, from: number, to: number, name: string): boolean {
  if (to - from === name.length && query.startsWith(name, from)) return true;
  // Only an encoded key (`%72edirect`, `a+b`) can still be equal once decoded.
  for (let i = from; i < to; i++) {
    const c = query.charCodeAt(i);
    if (c === PERCENT || c === PLUS) return decodeQuery(query.slice(from, to)) === name;
  }
  return false;
}

/** Strips a port and lower-cases: `Example.COM:8080` -> `example.com`, `[::1]:80` -> `[::1]`. */
export function normalizeHost(host: string): string {
  let plain = true; // no port, no upper case: return it as it is
  for (let i = 0; i < host.length && plain; i++) {
    const c = host.charCodeAt(i);
    plain = c !== 58 && (c < 65 || c > 90);
  }
  if (plain) return host;
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
  /** Lower-cased header values as `[name, value, name, value, ...]`; the first `headersLowerUsed` count. */
  private readonly headersLower: (string | undefined)[] = [];
  private headersLowerUsed = 0;

  constructor(public request: RequestInfo) {}

  /**
   * Points the view at another request, forgetting everything cached. The evaluator keeps one
   * view and resets it per request, so evaluating allocates no view object.
   */
  reset(request: RequestInfo): this {
    this.request = request;
    this.pathValue = undefined;
    this.pathLower = undefined;
    this.queryValue = undefined;
    this.queryLower = undefined;
    this.uaLower = undefined;
    this.hostValue = undefined;
    this.methodValue = undefined;
    this.headersLowerUsed = 0;
    return this;
  }

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

  /**
   * A header's value in lower case, computed once per request and name. A flat array, not a map:
   * a request's rules name a handful of headers, and clearing it per request allocates nothing.
   */
  headerLowerCase(name: string): string | undefined {
    const cache = this.headersLower;
    const used = this.headersLowerUsed;
    for (let i = 0; i < used; i += 2) if (cache[i] === name) return cache[i + 1];
    const value = this.request.headers[name]?.toLowerCase();
    cache[used] = name;
    cache[used + 1] = value;
    this.headersLowerUsed = used + 2;
    return value;
  }
}
