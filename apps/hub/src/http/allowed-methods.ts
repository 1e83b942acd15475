/**
 * Which methods each path of the API has, read from the OpenAPI document: what a request with
 * another method on an existing path is told in `405 Method Not Allowed` and its `Allow` header.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface RouteMethods {
  readonly pattern: RegExp;
  readonly methods: readonly string[];
}

export class AllowedMethods {
  private constructor(private readonly routes: readonly RouteMethods[]) {}

  /** From the `paths` of an OpenAPI document (`/v1/sites/{siteId}` templates). */
  static fromPaths(paths: Readonly<Record<string, object>>): AllowedMethods {
    return new AllowedMethods(
      Object.entries(paths).map(([template, operations]) => ({
        pattern: templatePattern(template),
        methods: METHODS.filter((m) => m in operations).map((m) => m.toUpperCase()),
      })),
    );
  }

  /**
   * The methods `path` has (HEAD with GET, as Express answers it), upper-case and sorted;
   * undefined when no route has the path.
   */
  of(path: string): string[] | undefined {
    const found = new Set<string>();
    for (const route of this.routes) {
      if (!route.pattern.test(path)) continue;
      for (const method of route.methods) found.add(method);
      if (route.methods.includes('GET')) found.add('HEAD');
    }
    return found.size === 0 ? undefined : [...found].sort();
  }
}

/** `/v1/sites/{siteId}` -> a pattern where each parameter is one non-empty path segment. */
function templatePattern(template: string): RegExp {
  const parts = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}/?$`);
}
