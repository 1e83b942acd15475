/**
 * A minimal browser for tests: `fetch` with a cookie jar, no automatic redirects, and helpers
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
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '')
        this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
}
