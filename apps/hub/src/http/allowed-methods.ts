/**
 * Which methods each path of the API has, read from the OpenAPI document: what a request with
 * another method on an existing path is told in `405 Method Not Allowed` and its `Allow` header.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface RouteMethods {
  readonly pattern: RegExp;
  readonly methods: readonly string[];
  /** Literal segments: of the templates matching a path, the most literal one names it. */
  readonly literals: number;
}

export class AllowedMethods {
  private constructor(private readonly routes: readonly RouteMethods[]) {}

  /** From the `paths` of an OpenAPI document (`/v1/sites/{siteId}` templates). */
  static fromPaths(paths: Readonly<Record<string, object>>): AllowedMethods {
    return new AllowedMethods(
      Object.entries(paths).map(([template, operations]) => ({
        pattern: templatePattern(template),
        methods: METHODS.filter((m) => m in operations).map((m) => m.toUpperCase()),
        literals: template.split('/').filter((segment) => !segment.startsWith('{')).length,
      })),
    );
  }

  /**
   * The methods `path` has as the document describes it (HEAD with GET, as Express answers it),
   * upper-case and sorted; undefined when no route has the path. `/v1/sites/x/rules/export` is
   * the export, not a rule named "export".
   */
  of(path: string): string[] | undefined {
    const matching = this.routes.filter((route) => route.pattern.test(path));
    if (matching.length === 0) return undefined;
    const literals = Math.max(...matching.map((route) => route.literals));
    const found = new Set<string>();
    for (const route of matching.filter((r) => r.literals === literals)) {
      for (const method of route.methods) found.add(method);
      if (route.methods.includes('GET')) found.add('HEAD');
    }
    return [...found].sort();
  }
}

/** `/v1/sites/{siteId}` -> a pattern where each parameter is one non-empty path segment. */
function templatePattern(template: string): RegExp {
  const parts = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}/?$`);
}
