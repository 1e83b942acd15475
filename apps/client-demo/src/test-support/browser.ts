/**
 * A minimal browser for tests: `fetch` with a cookie jar (a `Set-Cookie` with an empty value,
 * `Max-Age=0` or an `Expires` in the past deletes its cookie), no automatic redirects, and helpers
 * to read a form's CSRF token and submit forms as a browser would (urlencoded).
 */
export interface Page {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('GET', path, undefined, headers);
  }

  async post(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Page> {
    return this.request('POST', path, new URLSearchParams(form).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    });
  }

  /** The CSRF token in the first form of `path`'s page. */
  async csrfToken(path = '/login'): Promise<string> {
    const page = await this.get(path);
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match?.[1]) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
    return match[1];
  }

  async logIn(email: string, password: string): Promise<Page> {
    const _csrf = await this.csrfToken('/login');
    return this.post('/login', { _csrf, email, password });
  }

  private async request(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      body,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...headers },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = (pair as string).indexOf('=');
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      if (value === '' || isExpired(attributes)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
}

/** True for a `Set-Cookie` that deletes its cookie: `Max-Age` of 0 or less, or `Expires` past. */
function isExpired(attributes: readonly string[]): boolean {
  return attributes.some((attribute) => {
    const [key = '', value = ''] = attribute.split('=').map((part) => part.trim());
    if (/^max-age$/i.test(key)) return Number(value) <= 0;
    return /^expires$/i.test(key) && Date.parse(value) <= Date.now();
  });
}
