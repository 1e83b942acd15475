/**
 * Which route and which rule set serve a request: the incoming host picks the route (and with it
 * the site), the longest rule-set prefix of the path picks the rules (SUBSTITUTION-SPEC 2: a
 * child list replaces its parent, never merges). Prefixes compare as plain strings on the raw
 * path, as nginx's prefix locations do: `/blog` covers `/blog`, `/blog/` and `/blogroll`.
 *
 * A table is immutable. A new configuration builds a new table (compiling only rule sets the
 * cache does not hold) and is swapped in whole; a request holds the table it started with.
 */
import type { ProxyConfig, ProxyRoute } from '@rampart/rules-core/proxy-config/proxy-config';
import type { CachedRuleSet, CompiledSets } from '../rules/compiled-sets.js';

export interface SiteRoute {
  readonly site: string;
  readonly route: ProxyRoute;
  /** Whether the site's WAF rules are evaluated before proxying. */
  readonly edgeWaf: boolean;
  /** Longest prefix first. */
  readonly ruleSets: readonly { readonly pathPrefix: string; readonly rules: CachedRuleSet }[];
}

/** Two sites claim the same incoming host: which one would serve it is not for prexy to guess. */
export class RouteConflictError extends Error {
  override readonly name = 'RouteConflictError';
}

export class RouteTable {
  private constructor(
    private readonly byHost: ReadonlyMap<string, SiteRoute>,
    /** Every rule set id in use (what the compile cache keeps). */
    readonly ruleSetIds: ReadonlySet<string>,
  ) {}

  /**
   * Builds the table for `sites`, compiling through `sets`; throws `RuleSetError` (naming the
   * rule) when a rule set does not compile, and {@link RouteConflictError} when two sites route
   * one host, leaving whatever table is in use untouched.
   */
  static build(
    sites: readonly { readonly name: string; readonly proxy: ProxyConfig }[],
    sets: CompiledSets,
  ): RouteTable {
    const byHost = new Map<string, SiteRoute>();
    const ids = new Set<string>();
    for (const site of sites) {
      const ruleSets = [...site.proxy.ruleSets]
        .sort((a, b) => b.pathPrefix.length - a.pathPrefix.length)
        .map((s) => ({ pathPrefix: s.pathPrefix, rules: sets.get(s.rules, s.matchKind) }));
      for (const s of ruleSets) ids.add(s.rules.id);
      for (const route of site.proxy.routes) {
        const other = byHost.get(route.host);
        if (other !== undefined) {
          throw new RouteConflictError(
            `host "${route.host}" is routed by site ${other.site} and by site ${site.name}`,
          );
        }
        byHost.set(route.host, {
          site: site.name,
          route,
          edgeWaf: site.proxy.edgeWaf,
          ruleSets,
        });
      }
    }
    return new RouteTable(byHost, ids);
  }

  /** The route for a lowercased `Host` (port included when not the scheme's default). */
  route(host: string): SiteRoute | undefined {
    return this.byHost.get(host);
  }

  get hosts(): readonly string[] {
    return [...this.byHost.keys()];
  }
}

/** The rule set for `path` on `route`, or undefined when no prefix covers it (or it has no rules). */
export function ruleSetFor(route: SiteRoute, path: string): CachedRuleSet | undefined {
  for (const s of route.ruleSets) {
    if (path.startsWith(s.pathPrefix)) return s.rules.rules.length > 0 ? s.rules : undefined;
  }
  return undefined;
}
