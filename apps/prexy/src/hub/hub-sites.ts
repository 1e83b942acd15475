/**
 * The sites whose configuration the hub manages: for each, the waf-client (the repository's one
 * sync implementation) keeps the site's snapshot current, and prexy takes two things from it:
 *
 * - the proxy configuration the snapshot carries (`proxy_config`), installed in place of the
 *   file's `proxy` for that site (which serves until the first snapshot carrying one, and again
 *   if a later snapshot carries none);
 * - with `edgeWaf`, the client's request handler as the site's {@link EdgeGuard}: the same
 *   decisions, reports and rate limits as in an app, before the upstream is contacted.
 *
 * A configuration that does not validate or compile, or that routes a host another site routes,
 * is refused with a warning and the one in force stays; requests in flight keep theirs either
 * way (see `prexy-server.ts`). Compiled rule sets are cached by content, so a snapshot that
 * changes only WAF rules installs the same sets without compiling anything.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  describeProxyConfigIssues,
  type ProxyConfig,
  parseProxyConfig,
} from '@rampart/rules-core/proxy-config/proxy-config';
import { createRampart, type Rampart } from '@rampart/waf-client/rampart';
import { PrexyFileError, type SiteEntry } from '../config/prexy-file.js';
import { answer, type EdgeGuard } from '../proxy/proxy-handler.js';

export interface HubSitesOptions {
  /** Told the whole site list each time a site's configuration changes; throws to refuse it. */
  readonly install: (sites: readonly SiteEntry[]) => void;
  readonly warn: (message: string) => void;
  /** Names this process among the site's instances and keeps its snapshot folder apart. */
  readonly worker: string;
  /** Where site keys are read (`hub.siteKeyEnv`); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** waf-client options for tests (faster polls and reports); none in production. */
  readonly clientOptions?: Readonly<Record<string, unknown>>;
}

interface HubSite {
  readonly rampart: Rampart;
  readonly guard: EdgeGuard;
  /** The configuration the last snapshot carried (null: none, the file's applies). */
  fromHub: ProxyConfig | null;
  /** The snapshot version whose configuration is in force. */
  version: number | null;
}

export class HubSites {
  private readonly hubSites = new Map<string, HubSite>();
  private fileSites: readonly SiteEntry[];

  /**
   * Starts a waf-client per hub-managed site of `sites` (each syncing at once). Throws
   * {@link PrexyFileError} when a site's key variable is not set.
   */
  constructor(
    sites: readonly SiteEntry[],
    private readonly options: HubSitesOptions,
  ) {
    this.fileSites = sites;
    const env = options.env ?? process.env;
    const missing = sites.flatMap((s, i) =>
      s.hub !== undefined && !env[s.hub.siteKeyEnv]
        ? [{ field: `sites[${i}].hub.siteKeyEnv`, reason: `$${s.hub.siteKeyEnv} is not set` }]
        : [],
    );
    if (missing.length > 0) throw new PrexyFileError('environment', missing);
    for (const site of sites) {
      if (site.hub === undefined) continue;
      const name = site.name;
      const rampart = createRampart({
        ...options.clientOptions,
        hubUrl: site.hub.url,
        siteKey: env[site.hub.siteKeyEnv] as string,
        dataDir: `${site.hub.dataDir}/${options.worker}`,
        instanceId: `prexy-${options.worker}-${process.pid}`,
        env: {},
        logger: {
          info: (m) => options.warn(`site ${name}: ${m}`),
          warn: (m) => options.warn(`site ${name}: ${m}`),
          error: (m) => options.warn(`site ${name}: ${m}`),
        },
      });
      const entry: HubSite = {
        rampart,
        guard: edgeGuardOf(rampart),
        fromHub: null,
        version: null,
      };
      this.hubSites.set(name, entry);
      rampart.onSnapshot((snapshot) => this.received(name, snapshot.proxyConfig, snapshot.version));
    }
  }

  /** The edge WAF of a hub-managed site (the route decides whether it is switched on). */
  guard(site: string): EdgeGuard | undefined {
    return this.hubSites.get(site)?.guard;
  }

  /** The snapshot version whose proxy configuration `site` runs, null for the file's. */
  versionOf(site: string): number | null {
    return this.hubSites.get(site)?.version ?? null;
  }

  /** Resolves when every site has its first snapshot or gave up waiting (fail mode). */
  async ready(): Promise<void> {
    await Promise.all([...this.hubSites.values()].map((s) => s.rampart.ready()));
  }

  /**
   * A reloaded file: its sites' own configuration is taken, the hub's stays where a snapshot
   * gave one. Sites and hub links themselves change on restart only.
   */
  reloadFile(sites: readonly SiteEntry[]): void {
    const names = (list: readonly SiteEntry[]) =>
      list.map((s) => `${s.name}:${s.hub?.url ?? ''}`).join(',');
    if (names(sites) !== names(this.fileSites)) {
      throw new Error('sites and their hub links change on restart only');
    }
    this.options.install(this.compose(sites));
    this.fileSites = sites;
  }

  /** The sites as they would be with the configurations in hand. */
  compose(fileSites: readonly SiteEntry[] = this.fileSites): SiteEntry[] {
    return fileSites.map((site) => {
      const fromHub = this.hubSites.get(site.name)?.fromHub;
      return fromHub ? { ...site, proxy: fromHub } : site;
    });
  }

  /** Stops syncing and flushes the edge WAF's reports. */
  async close(): Promise<void> {
    await Promise.all([...this.hubSites.values()].map((s) => s.rampart.close()));
  }

  private received(name: string, raw: unknown, version: number): void {
    const site = this.hubSites.get(name);
    if (site === undefined) return;
    let next: ProxyConfig | null = null;
    if (raw !== null) {
      const parsed = parseProxyConfig(raw);
      if (!parsed.ok) {
        this.options.warn(
          `site ${name}: snapshot ${version} refused, the configuration in force stays: ${describeProxyConfigIssues(parsed.issues)}`,
        );
        return;
      }
      next = parsed.config;
    }
    if (sameConfig(next, site.fromHub)) {
      site.version = version;
      return;
    }
    const previous = site.fromHub;
    site.fromHub = next;
    try {
      this.options.install(this.compose());
      site.version = version;
    } catch (error) {
      site.fromHub = previous;
      this.options.warn(
        `site ${name}: snapshot ${version} refused, the configuration in force stays: ${(error as Error).message}`,
      );
    }
  }
}

function sameConfig(a: ProxyConfig | null, b: ProxyConfig | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The waf-client's middleware as prexy's guard: it answers blocked and rate-limited requests
 * itself (403, 429) and lets the others through to the upstream.
 */
function edgeGuardOf(rampart: Rampart): EdgeGuard {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    rampart.middleware(req, res, (error?: unknown) => {
      if (error === undefined) {
        next();
        return;
      }
      answer(res, 500, 'edge WAF failure\n');
    });
  };
}
