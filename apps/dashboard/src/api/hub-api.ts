/**
 * The hub's API as the dashboard uses it: same-origin requests with the session cookie, the
 * session's CSRF token on every request that changes something, and errors read from the hub's
 * problem details (RFC 9457) so a form can show each `issue` next to the field it names.
 */

/** One field-level problem of a refused request. */
export interface Issue {
  readonly field: string;
  readonly reason: string;
  /** Rule validation: which rule of the set (imports name several). */
  readonly index?: number;
  readonly ruleId?: string;
}

/** A refused request: the hub's problem details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly issues: readonly Issue[] = [],
  ) {
    super(detail);
  }

  /** The reason of the issue about `field` (or, unless `exact`, a field inside it), if any. */
  reasonFor(field: string, exact = false): string | undefined {
    const about = (name: string) =>
      name === field || (!exact && (name.startsWith(`${field}[`) || name.startsWith(`${field}.`)));
    return this.issues.find((i) => about(i.field))?.reason;
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

let csrfToken: string | undefined;
let onSessionLost: () => void = () => undefined;

/** The CSRF token of the session just opened or found; cleared at logout. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Called when the hub answers 401: the session expired or was closed elsewhere. */
export function whenSessionLost(callback: () => void): void {
  onSessionLost = callback;
}

/** Sends one request; resolves with the JSON body (undefined for 204), throws {@link ApiError}. */
export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const problem = (parsed ?? {}) as { detail?: string; issues?: Issue[] };
    if (response.status === 401 && !path.startsWith('/v1/session')) onSessionLost();
    throw new ApiError(
      response.status,
      problem.detail ?? `${response.status} ${response.statusText}`,
      problem.issues ?? [],
    );
  }
  return parsed as T;
}

/**
 * Runs a change the hub may refuse, as every form does: clears the last refusal, runs `action`,
 * and hands a refusal ({@link ApiError}) to `report` for the form to show next to its fields.
 * Anything else (a bug, the network gone) is thrown on.
 */
export async function attempt(
  action: () => Promise<void>,
  report: (refusal: ApiError | undefined) => void,
): Promise<void> {
  report(undefined);
  try {
    await action();
  } catch (e) {
    if (e instanceof ApiError) report(e);
    else throw e;
  }
}

/** `/v1/sites/<id>` and below, with the id escaped. */
export function sitePath(siteId: string, rest = ''): string {
  return `/v1/sites/${encodeURIComponent(siteId)}${rest}`;
}

/** `?a=1&b=2` from the defined entries of `query`. */
export function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
