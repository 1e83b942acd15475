/**
 * A site's configuration for prexy, the streaming substitution proxy: which incoming hosts go to
 * which upstream origin, and which ordered substitution rule sets apply under which path prefix
 * (SUBSTITUTION-SPEC points 2 and 15-17). The hub stores it per site and ships it in the site's
 * snapshot; prexy reads the same shape from its local configuration file.
 *
 * The contract of {@link parseProxyConfig}: either the whole document is valid and a normalised
 * {@link ProxyConfig} (every default filled in) comes back, or every problem is listed, each
 * naming its field as a dotted path (`ruleSets[1].rules[3]`) and the reason. Rule sets are
 * compiled with the engine itself, so a pattern the engine cannot run is refused here with its
 * position and construct, never at the first response. Unknown fields are errors.
 */
import { compileRuleSet, type MatchKind, RuleSetError } from '../substitution/rule-set.js';

export interface ProxyRoute {
  /** Incoming `Host`, lowercased, with `:port` when the listener is not on 80/443. */
  readonly host: string;
  /** `http://` or `https://` origin, no path: requests keep their own path. */
  readonly upstream: string;
  /** Media types whose bodies are substituted (lowercased, no parameters; `*` = any). */
  readonly contentTypes: readonly string[];
  /** Longest partial match held back before giving up on a body (SUBSTITUTION-SPEC 13). */
  readonly maxBufferedBytes: number;
  /** Keep upstream's `Last-Modified` on substituted responses (dropped by default, like nginx). */
  readonly keepLastModified: boolean;
  /** Send the client's `Host` upstream instead of the upstream's own (nginx: `$proxy_host`). */
  readonly preserveHost: boolean;
}

export interface SubstitutionRuleConfig {
  readonly pattern: string;
  readonly replacement: string;
  /** A subset of `gi`; empty = first match only, case-sensitive. */
  readonly flags: string;
}

export interface ProxyRuleSet {
  /**
   * Requests whose path starts with this string use these rules; the longest matching prefix
   * wins and replaces its parents' rules (no merging). `/` is the site-wide set.
   */
  readonly pathPrefix: string;
  readonly matchKind: MatchKind;
  readonly rules: readonly SubstitutionRuleConfig[];
}

export interface ProxyConfig {
  readonly routes: readonly ProxyRoute[];
  readonly ruleSets: readonly ProxyRuleSet[];
  /** Evaluate the site's WAF rules at the proxy, before the upstream is contacted. */
  readonly edgeWaf: boolean;
}

export interface ProxyConfigIssue {
  /** Dotted path of the field, e.g. `routes[0].upstream`; empty for the document itself. */
  readonly field: string;
  readonly reason: string;
}

export type ProxyConfigResult =
  | { readonly ok: true; readonly config: ProxyConfig }
  | { readonly ok: false; readonly issues: readonly ProxyConfigIssue[] };

export const DEFAULT_CONTENT_TYPES: readonly string[] = ['text/html'];
export const DEFAULT_PROXY_MAX_BUFFERED_BYTES = 8192;
/** Upper bounds that keep one configuration from exhausting a proxy. */
export const MAX_PROXY_BUFFERED_BYTES = 16 * 1024 * 1024;
export const MAX_RULES_PER_SET = 500;
export const MAX_RULE_SETS = 1000;
export const MAX_ROUTES = 1000;
/** Longest texts accepted, per field (a host name is at most 253 characters, plus a port). */
export const MAX_LENGTH = {
  host: 260,
  upstream: 300,
  contentType: 255,
  pathPrefix: 2048,
  pattern: 4096,
  replacement: 65_536,
} as const;

const EMPTY: ProxyConfig = { routes: [], ruleSets: [], edgeWaf: false };
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/;
const MEDIA_TYPE = /^(?:\*|[a-z0-9!#$&^_.+-]+\/(?:\*|[a-z0-9!#$&^_.+-]+))$/;

/** An empty configuration: no routes, no rules (what a site without prexy settings has). */
export function emptyProxyConfig(): ProxyConfig {
  return EMPTY;
}

/** Validates untrusted JSON into a {@link ProxyConfig}; see the module comment for the contract. */
export function parseProxyConfig(json: unknown): ProxyConfigResult {
  const issues = new Issues();
  const fail = issues.add;
  if (!isObject(json)) {
    fail('', 'must be an object with "routes", "ruleSets" and "edgeWaf"');
    return { ok: false, issues: issues.list };
  }
  onlyKeys(json, ['routes', 'ruleSets', 'edgeWaf'], '', fail);
  const routes: ProxyRoute[] = [];
  const seenHosts = new Map<string, number>();
  list(json.routes, 'routes', MAX_ROUTES, fail).forEach((raw, i) => {
    const route = parseRoute(raw, `routes[${i}]`, issues);
    if (route === undefined) return;
    const earlier = seenHosts.get(route.host);
    if (earlier !== undefined) fail(`routes[${i}].host`, `repeats routes[${earlier}].host`);
    else seenHosts.set(route.host, i);
    routes.push(route);
  });
  const ruleSets: ProxyRuleSet[] = [];
  const seenPrefixes = new Map<string, number>();
  list(json.ruleSets, 'ruleSets', MAX_RULE_SETS, fail).forEach((raw, i) => {
    const set = parseRuleSetEntry(raw, `ruleSets[${i}]`, issues);
    if (set === undefined) return;
    const earlier = seenPrefixes.get(set.pathPrefix);
    if (earlier !== undefined) {
      fail(`ruleSets[${i}].pathPrefix`, `repeats ruleSets[${earlier}].pathPrefix`);
    } else seenPrefixes.set(set.pathPrefix, i);
    ruleSets.push(set);
  });
  let edgeWaf = false;
  if (json.edgeWaf !== undefined) {
    if (typeof json.edgeWaf === 'boolean') edgeWaf = json.edgeWaf;
    else fail('edgeWaf', 'must be true or false');
  }
  if (issues.list.length > 0) return { ok: false, issues: issues.list };
  return { ok: true, config: { routes, ruleSets, edgeWaf } };
}

/** Problems as one line each, e.g. `routes[0].upstream: must be an http(s) origin`. */
export function describeProxyConfigIssues(issues: readonly ProxyConfigIssue[], max = 5): string {
  const lines = issues
    .slice(0, max)
    .map((i) => (i.field === '' ? i.reason : `${i.field}: ${i.reason}`));
  if (issues.length > max) lines.push(`... and ${issues.length - max} more`);
  return lines.join('; ');
}

/** Collects issues; `count` lets a parser tell whether its own checks failed. */
class Issues {
  readonly list: ProxyConfigIssue[] = [];
  readonly add = (field: string, reason: string): void => {
    this.list.push({ field, reason });
  };
}

type Fail = Issues['add'];

function parseRoute(raw: unknown, at: string, issues: Issues): ProxyRoute | undefined {
  const fail = issues.add;
  if (!isObject(raw)) {
    fail(at, 'must be an object');
    return undefined;
  }
  const before = issues.list.length;
  onlyKeys(
    raw,
    ['host', 'upstream', 'contentTypes', 'maxBufferedBytes', 'keepLastModified', 'preserveHost'],
    at,
    fail,
  );
  let host = '';
  if (typeof raw.host !== 'string' || raw.host === '') {
    fail(
      `${at}.host`,
      'is required: the incoming Host, such as "shop.example" or "localhost:8080"',
    );
  } else if (raw.host.length > MAX_LENGTH.host) {
    fail(`${at}.host`, `is longer than ${MAX_LENGTH.host} characters`);
  } else {
    host = raw.host.toLowerCase();
    const port = /:(\d+)$/.exec(host)?.[1];
    if (!HOST.test(host) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      fail(`${at}.host`, `"${raw.host}" is not a host name with an optional :port (1-65535)`);
    }
  }
  const upstream = parseOrigin(raw.upstream, `${at}.upstream`, fail);
  let contentTypes = DEFAULT_CONTENT_TYPES;
  if (raw.contentTypes !== undefined) {
    contentTypes = list(raw.contentTypes, `${at}.contentTypes`, 100, fail).flatMap((t, i) => {
      if (
        typeof t !== 'string' ||
        t.length > MAX_LENGTH.contentType ||
        !MEDIA_TYPE.test(t.toLowerCase())
      ) {
        fail(`${at}.contentTypes[${i}]`, 'must be a media type such as "text/html", or "*"');
        return [];
      }
      return [t.toLowerCase()];
    });
  }
  let maxBufferedBytes = DEFAULT_PROXY_MAX_BUFFERED_BYTES;
  if (raw.maxBufferedBytes !== undefined) {
    const n = raw.maxBufferedBytes;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_PROXY_BUFFERED_BYTES) {
      fail(`${at}.maxBufferedBytes`, `must be an integer from 0 to ${MAX_PROXY_BUFFERED_BYTES}`);
    } else maxBufferedBytes = n;
  }
  const keepLastModified = flag(raw.keepLastModified, `${at}.keepLastModified`, fail);
  const preserveHost = flag(raw.preserveHost, `${at}.preserveHost`, fail);
  if (issues.list.length !== before) return undefined;
  return { host, upstream, contentTypes, maxBufferedBytes, keepLastModified, preserveHost };
}

function parseOrigin(raw: unknown, at: string, fail: Fail): string {
  if (typeof raw !== 'string' || raw === '') {
    fail(at, 'is required: the origin to proxy to, such as "http://127.0.0.1:3000"');
    return '';
  }
  if (raw.length > MAX_LENGTH.upstream) {
    fail(at, `is longer than ${MAX_LENGTH.upstream} characters`);
    return '';
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail(at, `"${raw}" is not a URL`);
    return '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(at, `must be http:// or https://, not ${url.protocol}`);
  } else if (url.username !== '' || url.password !== '') {
    fail(at, 'must not carry credentials');
  } else if (url.port === '0') {
    fail(at, 'port 0 is not a port to connect to');
  } else if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    fail(at, 'must be an origin without path, query or fragment (requests keep their own path)');
  }
  return url.origin;
}

function parseRuleSetEntry(raw: unknown, at: string, issues: Issues): ProxyRuleSet | undefined {
  const fail = issues.add;
  if (!isObject(raw)) {
    fail(at, 'must be an object');
    return undefined;
  }
  const before = issues.list.length;
  onlyKeys(raw, ['pathPrefix', 'matchKind', 'rules'], at, fail);
  const pathPrefix = typeof raw.pathPrefix === 'string' ? raw.pathPrefix : '';
  if (!pathPrefix.startsWith('/')) fail(`${at}.pathPrefix`, 'must be a path starting with "/"');
  else if (pathPrefix.length > MAX_LENGTH.pathPrefix) {
    fail(`${at}.pathPrefix`, `is longer than ${MAX_LENGTH.pathPrefix} characters`);
  } else if (/[?#\s]/.test(pathPrefix)) {
    fail(`${at}.pathPrefix`, 'must be a path, without query, fragment or spaces');
  }
  let matchKind: MatchKind = 'leftmost-first';
  if (raw.matchKind !== undefined) {
    if (raw.matchKind === 'leftmost-first' || raw.matchKind === 'leftmost-longest') {
      matchKind = raw.matchKind;
    } else fail(`${at}.matchKind`, 'must be "leftmost-first" or "leftmost-longest"');
  }
  const rules = list(raw.rules, `${at}.rules`, MAX_RULES_PER_SET, fail).flatMap((r, i) => {
    const field = `${at}.rules[${i}]`;
    if (!isObject(r)) {
      fail(field, 'must be an object with "pattern", "replacement" and optional "flags"');
      return [];
    }
    const ruleBefore = issues.list.length;
    onlyKeys(r, ['pattern', 'replacement', 'flags'], field, fail);
    if (typeof r.pattern !== 'string' || r.pattern === '') {
      fail(`${field}.pattern`, 'must be a non-empty string');
    } else if (r.pattern.length > MAX_LENGTH.pattern) {
      fail(`${field}.pattern`, `is longer than ${MAX_LENGTH.pattern} characters`);
    }
    if (typeof r.replacement !== 'string') fail(`${field}.replacement`, 'must be a string');
    else if (r.replacement.length > MAX_LENGTH.replacement) {
      fail(`${field}.replacement`, `is longer than ${MAX_LENGTH.replacement} characters`);
    }
    if (r.flags !== undefined && typeof r.flags !== 'string') {
      fail(`${field}.flags`, 'must be a string, a subset of "gi"');
    }
    if (issues.list.length !== ruleBefore) return [];
    return [
      {
        pattern: r.pattern as string,
        replacement: r.replacement as string,
        flags: (r.flags as string | undefined) ?? '',
      },
    ];
  });
  if (issues.list.length !== before) return undefined;
  // Each rule alone first, so that every rule the engine refuses is named, then the set (its
  // automaton can be too large even when every rule compiles).
  rules.forEach((rule, i) => {
    try {
      compileRuleSet([rule], { matchKind });
    } catch (error) {
      if (!(error instanceof RuleSetError)) throw error;
      fail(`${at}.rules[${i}]`, `${JSON.stringify(rule.pattern)}: ${error.reason}`);
    }
  });
  if (issues.list.length !== before) return undefined;
  try {
    compileRuleSet(rules, { matchKind });
  } catch (error) {
    if (!(error instanceof RuleSetError)) throw error;
    fail(`${at}.rules[${error.ruleIndex}]`, `${JSON.stringify(error.pattern)}: ${error.reason}`);
    return undefined;
  }
  return { pathPrefix, matchKind, rules };
}

function flag(raw: unknown, at: string, fail: Fail): boolean {
  if (raw === undefined) return false;
  if (typeof raw === 'boolean') return raw;
  fail(at, 'must be true or false');
  return false;
}

function list(raw: unknown, at: string, max: number, fail: Fail): readonly unknown[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    fail(at, 'must be a list');
    return [];
  }
  if (raw.length > max) {
    fail(at, `has ${raw.length} entries; at most ${max} are allowed`);
    return [];
  }
  return raw;
}

function onlyKeys(
  raw: Record<string, unknown>,
  allowed: readonly string[],
  at: string,
  fail: Fail,
): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) {
      fail(at === '' ? key : `${at}.${key}`, `is not a field (allowed: ${allowed.join(', ')})`);
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
