/**
 * Prexy's own configuration file (JSON): where it listens, how many workers, upstream timeouts,
 * and the sites it serves. A site's `proxy` part has the same shape as the configuration the hub
 * keeps per site (`@rampart/rules-core/proxy-config/proxy-config`), so a file written by hand
 * and one exported from the hub read alike.
 *
 * ```json
 * { "listen": { "host": "127.0.0.1", "port": 8080 },
 *   "sites": [{ "name": "shop", "proxy": {
 *     "routes": [{ "host": "localhost:8080", "upstream": "http://127.0.0.1:3000" }],
 *     "ruleSets": [{ "pathPrefix": "/", "rules": [{ "pattern": "Shop", "replacement": "Store", "flags": "g" }] }] } }] }
 * ```
 *
 * {@link parsePrexyFile} refuses a file with any problem, listing each with its field; prexy then
 * does not start (or, on a reload, keeps the configuration it has).
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import {
  emptyProxyConfig,
  type ProxyConfig,
  type ProxyConfigIssue,
  parseProxyConfig,
} from '@rampart/rules-core/proxy-config/proxy-config';

export interface UpstreamTimeouts {
  /** TCP (and TLS) connect to the upstream. */
  readonly connectMs: number;
  /** From the request written to the upstream's response headers. */
  readonly headersMs: number;
  /** Longest silence between two pieces of the upstream's body. */
  readonly bodyMs: number;
}

/**
 * Where a site's configuration and WAF rules come from when the hub manages it: its snapshots
 * carry the proxy configuration (which then replaces the file's `proxy`) and, for the edge WAF,
 * the rules. The site key is read from the environment variable named here, never from the file.
 */
export interface HubLink {
  readonly url: string;
  readonly siteKeyEnv: string;
  /** Where snapshots are kept across restarts (one folder per worker inside). */
  readonly dataDir: string;
}

export interface SiteEntry {
  readonly name: string;
  /** The configuration in force: the file's, or the hub's once a snapshot carried one. */
  readonly proxy: ProxyConfig;
  readonly hub?: HubLink;
}

export interface PrexyFile {
  readonly listen: { readonly host: string; readonly port: number };
  /** Worker processes, one per core by default. */
  readonly workers: number;
  /** One JSON line per request on stdout, with its stage timings. */
  readonly accessLog: boolean;
  readonly timeouts: UpstreamTimeouts;
  /** Per-URL memory of which rules matched (the bitmap cache), in bytes; 0 turns it off. */
  readonly matchCacheBytes: number;
  readonly sites: readonly SiteEntry[];
}

export class PrexyFileError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly ProxyConfigIssue[],
  ) {
    super(
      `${source}: ${issues
        .slice(0, 10)
        .map((i) => (i.field ? `${i.field}: ${i.reason}` : i.reason))
        .join('; ')}${issues.length > 10 ? `; ... and ${issues.length - 10} more` : ''}`,
    );
    this.name = 'PrexyFileError';
  }
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 5_000,
  headersMs: 30_000,
  bodyMs: 30_000,
};
export const DEFAULT_MATCH_CACHE_BYTES = 8 * 1024 * 1024;

/** Reads and validates `path`; throws {@link PrexyFileError} naming every bad field. */
export async function readPrexyFile(path: string): Promise<PrexyFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PrexyFileError(path, [{ field: '', reason: (error as Error).message }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PrexyFileError(path, [
      { field: '', reason: `not JSON: ${(error as Error).message}` },
    ]);
  }
  const parsed = parsePrexyFile(json);
  if (!parsed.ok) throw new PrexyFileError(path, parsed.issues);
  return parsed.file;
}

/** Validates an already parsed document (see the module comment). */
export function parsePrexyFile(
  json: unknown,
):
  | { readonly ok: true; readonly file: PrexyFile }
  | { readonly ok: false; readonly issues: readonly ProxyConfigIssue[] } {
  const issues: ProxyConfigIssue[] = [];
  const fail = (field: string, reason: string) => {
    issues.push({ field, reason });
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, issues: [{ field: '', reason: 'must be a JSON object' }] };
  }
  const doc = json as Record<string, unknown>;
  const allowed = ['listen', 'workers', 'accessLog', 'timeouts', 'matchCacheBytes', 'sites'];
  for (const key of Object.keys(doc)) {
    if (!allowed.includes(key)) fail(key, `is not a field (allowed: ${allowed.join(', ')})`);
  }
  const listen = objectAt(doc.listen, 'listen', ['host', 'port'], fail);
  const host = typeof listen.host === 'string' ? listen.host : '127.0.0.1';
  if (listen.host !== undefined && (typeof listen.host !== 'string' || listen.host === '')) {
    fail('listen.host', 'must be an address to bind');
  }
  const port = integer(listen.port, 'listen.port', 0, 65535, 8080, fail);
  const workers = integer(doc.workers, 'workers', 1, 256, availableParallelism(), fail);
  const matchCacheBytes = integer(
    doc.matchCacheBytes,
    'matchCacheBytes',
    0,
    2 ** 31,
    DEFAULT_MATCH_CACHE_BYTES,
    fail,
  );
  let accessLog = true;
  if (doc.accessLog !== undefined) {
    if (typeof doc.accessLog === 'boolean') accessLog = doc.accessLog;
    else fail('accessLog', 'must be true or false');
  }
  const t = objectAt(doc.timeouts, 'timeouts', ['connectMs', 'headersMs', 'bodyMs'], fail);
  const day = 86_400_000;
  const timeouts: UpstreamTimeouts = {
    connectMs: integer(t.connectMs, 'timeouts.connectMs', 1, day, DEFAULT_TIMEOUTS.connectMs, fail),
    headersMs: integer(t.headersMs, 'timeouts.headersMs', 1, day, DEFAULT_TIMEOUTS.headersMs, fail),
    bodyMs: integer(t.bodyMs, 'timeouts.bodyMs', 1, day, DEFAULT_TIMEOUTS.bodyMs, fail),
  };
  const sites: SiteEntry[] = [];
  if (!Array.isArray(doc.sites) || doc.sites.length === 0) {
    fail('sites', 'must be a non-empty list of { "name", "proxy" }');
  } else {
    const names = new Set<string>();
    const hosts = new Map<string, string>();
    doc.sites.forEach((raw, i) => {
      const site = objectAt(raw, `sites[${i}]`, ['name', 'proxy', 'hub'], fail);
      const name = site.name;
      if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
        fail(`sites[${i}].name`, 'must be a name of letters, digits, ".", "_" or "-"');
      } else if (names.has(name)) fail(`sites[${i}].name`, `"${name}" is used twice`);
      else names.add(name);
      const hub =
        site.hub === undefined ? undefined : parseHubLink(site.hub, `sites[${i}].hub`, name, fail);
      if (site.proxy === undefined && site.hub === undefined) {
        fail(
          `sites[${i}]`,
          'needs "proxy" (its configuration), "hub" (where it is managed), or both',
        );
        return;
      }
      const proxy =
        site.proxy === undefined
          ? ({ ok: true, config: emptyProxyConfig() } as const)
          : parseProxyConfig(site.proxy);
      if (!proxy.ok) {
        for (const issue of proxy.issues) {
          fail(
            issue.field ? `sites[${i}].proxy.${issue.field}` : `sites[${i}].proxy`,
            issue.reason,
          );
        }
        return;
      }
      proxy.config.routes.forEach((r, j) => {
        const other = hosts.get(r.host);
        if (other !== undefined) {
          fail(`sites[${i}].proxy.routes[${j}].host`, `"${r.host}" is already routed by ${other}`);
        } else hosts.set(r.host, `sites[${i}]`);
      });
      if (proxy.config.edgeWaf && site.hub === undefined) {
        fail(
          `sites[${i}].proxy.edgeWaf`,
          'needs the site\'s "hub": the WAF rules come in the site\'s snapshots',
        );
      }
      sites.push({ name: String(name), proxy: proxy.config, ...(hub ? { hub } : {}) });
    });
  }
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    file: { listen: { host, port }, workers, accessLog, timeouts, matchCacheBytes, sites },
  };
}

function parseHubLink(
  raw: unknown,
  at: string,
  name: unknown,
  fail: (field: string, reason: string) => void,
): HubLink | undefined {
  let failed = false;
  const failHere = (field: string, reason: string) => {
    failed = true;
    fail(field, reason);
  };
  const hub = objectAt(raw, at, ['url', 'siteKeyEnv', 'dataDir'], failHere);
  let url = '';
  try {
    const parsed = new URL(String(hub.url));
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    if (parsed.username !== '' || parsed.password !== '') {
      failHere(`${at}.url`, 'must not carry credentials (the key comes from siteKeyEnv)');
    }
    url = parsed.href.replace(/\/$/, '');
  } catch {
    failHere(`${at}.url`, 'must be the hub\'s http(s) URL, such as "http://127.0.0.1:4000"');
  }
  const siteKeyEnv = hub.siteKeyEnv ?? 'RAMPART_SITE_KEY';
  if (typeof siteKeyEnv !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(siteKeyEnv)) {
    failHere(`${at}.siteKeyEnv`, 'must name an environment variable (A-Z, 0-9, _)');
  }
  const dataDir = hub.dataDir ?? `.prexy/${String(name)}`;
  if (typeof dataDir !== 'string' || dataDir === '') {
    failHere(`${at}.dataDir`, 'must be a folder path');
  }
  if (failed) return undefined;
  return { url, siteKeyEnv: siteKeyEnv as string, dataDir: dataDir as string };
}

function objectAt(
  raw: unknown,
  at: string,
  allowed: readonly string[],
  fail: (field: string, reason: string) => void,
): Record<string, unknown> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail(at, 'must be an object');
    return {};
  }
  const doc = raw as Record<string, unknown>;
  for (const key of Object.keys(doc)) {
    if (!allowed.includes(key)) {
      fail(`${at}.${key}`, `is not a field (allowed: ${allowed.join(', ')})`);
    }
  }
  return doc;
}

function integer(
  raw: unknown,
  at: string,
  min: number,
  max: number,
  fallback: number,
  fail: (field: string, reason: string) => void,
): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) {
    fail(at, `must be an integer from ${min} to ${max}`);
    return fallback;
  }
  return raw;
}
