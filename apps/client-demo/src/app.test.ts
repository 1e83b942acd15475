import Keygrip from 'keygrip';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOGIN_FAILED } from './controllers/sessions-controller.js';
import { DEMO_USER, SEED_PRODUCTS } from './db/seed.js';
import { ProductModel } from './models/product.js';
import { UserModel } from './models/user.js';
import { Browser, type Page } from './test-support/browser.js';
import {
  DATABASE_KINDS,
  type DemoServer,
  freshPostgresDatabase,
  startDemo,
  stopPostgres,
} from './test-support/demo-server.js';

afterAll(stopPostgres);

describe.each(DATABASE_KINDS)('the demo on %s', (kind) => {
  let server: DemoServer;
  let databaseUrl: string | undefined;

  beforeAll(async () => {
    databaseUrl = kind === 'postgres' ? await freshPostgresDatabase() : undefined;
    server = await startDemo({ databaseUrl });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('boots, migrates and seeds the demo user and products', async () => {
    expect(server.demo.database.dialect).toBe(kind);
    expect(server.demo.seeded).toBe(true);
    expect(await new UserModel(server.demo.database.db).count()).toBe(1);
    expect(await new ProductModel(server.demo.database.db).count()).toBe(SEED_PRODUCTS.length);
    // The password is documented in the README, never logged.
    expect(server.logs.join('\n')).not.toContain(DEMO_USER.password);
  });

  it('seeds once: a restart on the same database inserts nothing', async () => {
    const again = await startDemo({ databaseUrl, dataDir: server.dataDir });
    try {
      expect(again.demo.seeded).toBe(false);
      expect(await new UserModel(again.demo.database.db).count()).toBe(1);
      expect(await new ProductModel(again.demo.database.db).count()).toBe(SEED_PRODUCTS.length);
    } finally {
      await again.demo.close(); // the data directory belongs to `server`
    }
  });

  it('answers /healthz with the database it uses', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: kind });
  });

  it('renders the home page, the product list and a product page', async () => {
    const browser = new Browser(server.url);
    const home = await browser.get('/');
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    expect(home.text).toContain('Tools for patient gardeners');
    expectSecurityHeaders(home);

    const list = await browser.get('/products');
    for (const product of SEED_PRODUCTS) expect(list.text).toContain(`/products/${product.slug}`);

    const first = SEED_PRODUCTS[0];
    const detail = await browser.get(`/products/${first.slug}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(first.name);
    expect(detail.text).toContain('$129.00');

    // Anonymous page views without a form get no session cookie.
    expect(home.headers.getSetCookie()).toEqual([]);
    expect(list.headers.getSetCookie()).toEqual([]);

    const missing = await browser.get('/products/no-such-thing');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Not found');
    for (const page of [list, detail, missing, await browser.get('/login')]) {
      expectSecurityHeaders(page);
    }
  });

  it('logs the demo user in and shows the account page', async () => {
    const browser = new Browser(server.url);
    const login = await browser.logIn(DEMO_USER.email.toUpperCase(), DEMO_USER.password);
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/account');
    // The session and its signature, both HttpOnly, SameSite=Lax, for the whole site, for the
    // configured lifetime (DEMO_SESSION_MAX_AGE, default 8 h), and not Secure (not configured).
    for (const name of [SESSION, `${SESSION}.sig`]) {
      const cookie = setCookie(login, name);
      expect(cookie?.value).toMatch(/^[\w+/=-]+$/);
      expect(cookie?.attributes).toMatchObject({ path: '/', httponly: '', samesite: 'lax' });
      expect(cookie?.attributes).not.toHaveProperty('secure');
      expect(expiresIn(cookie?.attributes.expires)).toBeCloseTo(8 * 3600, -1);
    }

    const account = await browser.get('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain(DEMO_USER.name);
    expect(account.text).toContain(DEMO_USER.email);
  });

  it('refuses a wrong password and an unknown user with the same answer', async () => {
    const wrong = await new Browser(server.url).logIn(DEMO_USER.email, 'not-the-password');
    const unknown = await new Browser(server.url).logIn('nobody@rampart.test', DEMO_USER.password);
    for (const page of [wrong, unknown]) {
      expect(page.status).toBe(401);
      expect(page.text).toContain(LOGIN_FAILED);
    }
    const messageOf = (text: string) => /<p class="error"[^>]*>([^<]*)<\/p>/.exec(text)?.[1];
    expect(messageOf(wrong.text)).toBe(messageOf(unknown.text));
  });

  it('keeps the account page behind a session', async () => {
    const browser = new Browser(server.url);
    const account = await browser.get('/account');
    expect(account.status).toBe(302);
    expect(account.headers.get('location')).toBe('/login?next=%2Faccount');
    // A forged cookie is ignored: no signature, a made-up one, or one under another secret.
    const session = encodeSession({ userId: 1, csrfToken: 'x'.repeat(64), expiresAt: 4e9 });
    const otherSecret = new Keygrip(['not-the-secret-not-the-secret-not-the'], 'sha256');
    for (const cookie of [
      `${SESSION}=${session}`,
      `${SESSION}=${session}; ${SESSION}.sig=forged`,
      `${SESSION}=${session}; ${SESSION}.sig=${otherSecret.sign(`${SESSION}=${session}`)}`,
    ]) {
      const forged = await new Browser(server.url).get('/account', { cookie });
      expect(forged.status).toBe(302);
    }
  });

  it('rejects a login post without the session-bound CSRF token', async () => {
    const browser = new Browser(server.url);
    const token = await browser.csrfToken('/login');
    const credentials = { email: DEMO_USER.email, password: DEMO_USER.password };

    const none = await browser.post('/login', credentials);
    expect(none.status).toBe(403);
    const wrong = await browser.post('/login', { ...credentials, _csrf: `${token.slice(1)}x` });
    expect(wrong.status).toBe(403);
    // The right token from another session does not help a cookie-less attacker.
    const attacker = await new Browser(server.url).post('/login', { ...credentials, _csrf: token });
    expect(attacker.status).toBe(403);
    expect(attacker.text).toContain('Form expired');

    const ok = await browser.post('/login', { ...credentials, _csrf: token });
    expect(ok.status).toBe(303);
  });

  it('rotates the CSRF token at login and logs out with a CSRF-checked post', async () => {
    const browser = new Browser(server.url);
    const before = await browser.csrfToken('/login');
    await browser.logIn(DEMO_USER.email, DEMO_USER.password);
    const after = await browser.csrfToken('/account');
    expect(after).not.toBe(before);

    expect((await browser.post('/logout', { _csrf: before })).status).toBe(403);
    const out = await browser.post('/logout', { _csrf: after });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/');
    // Both cookies cleared: the session emptied and expired, its signature expired.
    expect(setCookie(out, SESSION)?.value).toBe('');
    for (const name of [SESSION, `${SESSION}.sig`]) {
      expect(setCookie(out, name)?.attributes.expires).toBe('Thu, 01 Jan 1970 00:00:00 GMT');
    }
    expect(browser.cookies.size).toBe(0);
    expect((await browser.get('/account')).status).toBe(302);
  });

  it('follows only local paths after login', async () => {
    const browser = new Browser(server.url);
    const _csrf = await browser.csrfToken('/login?next=/products');
    const local = await browser.post('/login', {
      _csrf,
      email: DEMO_USER.email,
      password: DEMO_USER.password,
      next: '/products',
    });
    expect(local.headers.get('location')).toBe('/products');
    const other = new Browser(server.url);
    const token = await other.csrfToken('/login');
    const away = await other.post('/login', {
      _csrf: token,
      email: DEMO_USER.email,
      password: DEMO_USER.password,
      next: '//evil.example/',
    });
    expect(away.headers.get('location')).toBe('/account');
  });

  it('sets Server-Timing on every answer, saying when no WAF runs', async () => {
    const response = await fetch(`${server.url}/robots.txt`);
    expect(response.status).toBe(200);
    expect(response.headers.get('server-timing')).toMatch(
      /^waf;desc="none", app;dur=\d+\.\d{3}, total;dur=\d+\.\d{3}$/,
    );
  });
});

describe('the session cookie (cookie-session) and its CSRF token (csrf-sync)', () => {
  const LIFETIME = 3600;
  let server: DemoServer;
  beforeAll(async () => {
    server = await startDemo({
      env: { DEMO_SESSION_SECRET: SECRET, DEMO_SESSION_MAX_AGE: String(LIFETIME) },
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const signed = (session: Record<string, unknown>, keys = new Keygrip([SECRET], 'sha256')) => {
    const value = encodeSession(session);
    return `${SESSION}=${value}; ${SESSION}.sig=${keys.sign(`${SESSION}=${value}`)}`;
  };

  it('keeps the expiry inside the signed session and refuses a replayed cookie after it', async () => {
    const browser = new Browser(server.url);
    const login = await browser.logIn(DEMO_USER.email, DEMO_USER.password);
    const now = Date.now();
    const cookie = setCookie(login, SESSION);
    expect(expiresIn(cookie?.attributes.expires)).toBeCloseTo(LIFETIME, -1);
    const session = decodeSession(cookie?.value);
    expect(session.userId).toBeGreaterThan(0);
    expect((session.expiresAt as number) - now / 1000).toBeCloseTo(LIFETIME, -1);

    // Using the session does not extend it, nor write the cookie again.
    const account = await browser.get('/account');
    expect(account.status).toBe(200);
    expect(account.headers.getSetCookie()).toEqual([]);

    // The same cookie, replayed just before and just after the lifetime (whatever the browser
    // would have done with its Expires).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(now + (LIFETIME - 5) * 1000);
      expect((await browser.get('/account')).status).toBe(200);
      vi.setSystemTime(now + (LIFETIME + 2) * 1000);
      const late = await browser.get('/account');
      expect(late.status).toBe(302);
      expect(late.headers.get('location')).toBe('/login?next=%2Faccount');
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a validly signed session that has expired, outlives the lifetime or is malformed', async () => {
    const now = Math.floor(Date.now() / 1000);
    const valid = signed({ userId: 1, expiresAt: now + 60 });
    expect((await new Browser(server.url).get('/account', { cookie: valid })).status).toBe(200);
    for (const cookie of [
      signed({ userId: 1, expiresAt: now - 1 }),
      signed({ userId: 1, expiresAt: now + 2 * LIFETIME }), // issued under a longer lifetime
      signed({ userId: 1 }),
      signed({ userId: '1', expiresAt: now + 60 }),
      signed({ userId: 1, expiresAt: now + 60 }, new Keygrip([SECRET])), // HMAC-SHA1
    ]) {
      const refused = await new Browser(server.url).get('/account', { cookie });
      expect(refused.status).toBe(302);
    }

    // An expired session is replaced by a fresh one: its log-in form works.
    const browser = new Browser(server.url);
    for (const pair of signed({ expiresAt: now - 1, csrfToken: 'a'.repeat(64) }).split('; ')) {
      const [name = '', value = ''] = pair.split('=');
      browser.cookies.set(name, value);
    }
    const token = await browser.csrfToken('/login');
    expect(token).not.toBe('a'.repeat(64));
    const login = await browser.post('/login', {
      _csrf: token,
      email: DEMO_USER.email,
      password: DEMO_USER.password,
    });
    expect(login.status).toBe(303);
  });

  it('rotates the CSRF token in the log-in answer, so a session planted before it is worthless', async () => {
    const attacker = new Browser(server.url);
    const planted = await attacker.csrfToken('/login');
    const victim = new Browser(server.url);
    for (const [name, value] of attacker.cookies) victim.cookies.set(name, value);

    const login = await victim.logIn(DEMO_USER.email, DEMO_USER.password);
    expect(login.status).toBe(303);
    const session = decodeSession(setCookie(login, SESSION)?.value);
    expect(session.userId).toBeGreaterThan(0);
    expect(session.csrfToken).toMatch(/^[0-9a-f]{64}$/);
    expect(session.csrfToken).not.toBe(planted);

    // The attacker's copy of the session is still anonymous, and the planted token posts nothing.
    expect((await attacker.get('/account')).status).toBe(302);
    expect((await victim.post('/logout', { _csrf: planted })).status).toBe(403);
    expect(await victim.csrfToken('/account')).toBe(session.csrfToken);
    expect((await victim.get('/account')).status).toBe(200);
  });
});

describe('behind HTTPS (DEMO_SECURE_COOKIES)', () => {
  let server: DemoServer;
  beforeAll(async () => {
    server = await startDemo({
      env: { DEMO_SECURE_COOKIES: 'true', DEMO_TRUST_PROXY: 'true' },
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('marks the session cookie Secure and asks browsers to upgrade insecure requests', async () => {
    const page = await new Browser(server.url).get('/login', { 'x-forwarded-proto': 'https' });
    expect(page.status).toBe(200);
    expectSecurityHeaders(page, { https: true });
    for (const name of [SESSION, `${SESSION}.sig`]) {
      expect(setCookie(page, name)?.attributes).toHaveProperty('secure', '');
    }
  });

  it('fails loudly, instead of silently dropping the cookie, on a request over plain HTTP', async () => {
    const page = await new Browser(server.url).get('/login');
    expect(page.status).toBe(500);
    expect(page.headers.getSetCookie()).toEqual([]);
    expect(server.logs.join('\n')).toContain(
      'DEMO_SECURE_COOKIES is set but this request did not arrive over HTTPS',
    );
  });
});

describe('configuration errors', () => {
  let server: DemoServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('names every bad variable at once', async () => {
    await expect(
      startDemo({
        env: { DEMO_PORT: 'http', DEMO_DATABASE_URL: 'mysql://x', DEMO_SESSION_SECRET: 'short' },
      }),
    ).rejects.toThrow(
      /DEMO_PORT must be an integer.*DEMO_DATABASE_URL must be a postgres:\/\/ URL.*DEMO_SESSION_SECRET must be at least 32 characters/,
    );
  });

  it('refuses Secure cookies without a trusted TLS proxy in front (they could never be set)', async () => {
    await expect(startDemo({ env: { DEMO_SECURE_COOKIES: 'true' } })).rejects.toThrow(
      'DEMO_SECURE_COOKIES=true needs DEMO_TRUST_PROXY=true',
    );
  });
});

const SESSION = 'demo_session';
const SECRET = 'session-test-secret-session-test-secret';

/** The `Set-Cookie` of `name` on `page`: its value and its attributes (names lower-cased). */
function setCookie(
  page: Page,
  name: string,
): { value: string; attributes: Record<string, string> } | undefined {
  for (const line of page.headers.getSetCookie()) {
    const [pair = '', ...rest] = line.split(';');
    const eq = pair.indexOf('=');
    if (pair.slice(0, eq).trim() !== name) continue;
    const attributes: Record<string, string> = {};
    for (const attribute of rest) {
      const at = attribute.indexOf('=');
      const key = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
      attributes[key] = at < 0 ? '' : attribute.slice(at + 1).trim();
    }
    return { value: pair.slice(eq + 1).trim(), attributes };
  }
  return undefined;
}

/** Seconds from now until an `Expires` date. */
function expiresIn(expires: string | undefined): number {
  return (Date.parse(expires ?? '') - Date.now()) / 1000;
}

/** cookie-session's encoding of a session: base64 of its JSON. */
function encodeSession(session: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(session)).toString('base64');
}

function decodeSession(value: string | undefined): Record<string, unknown> {
  return JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8')) as Record<string, unknown>;
}

/** helmet's headers as `middleware/security-headers.ts` configures them. */
function expectSecurityHeaders(page: Page, { https = false } = {}): void {
  const csp = Object.fromEntries(
    (page.headers.get('content-security-policy') ?? '').split(';').map((directive) => {
      const [name, ...values] = directive.trim().split(/\s+/);
      return [name, values.join(' ')];
    }),
  );
  expect(csp).toEqual({
    'default-src': "'self'",
    'style-src': "'self'",
    'img-src': "'self' data:",
    'form-action': "'self'",
    'frame-ancestors': "'none'",
    'base-uri': "'none'",
    'object-src': "'none'",
    'script-src-attr': "'none'",
    ...(https ? { 'upgrade-insecure-requests': '' } : {}),
  });
  expect(Object.fromEntries(page.headers)).toMatchObject({
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  });
  expect(page.headers.get('x-powered-by')).toBeNull();
}
