import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
    const cookie = login.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/demo_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);

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
    // A forged cookie is ignored.
    const forged = await new Browser(server.url).get('/account', {
      cookie: `demo_session=${Buffer.from(JSON.stringify({ u: 1, c: 'x'.repeat(43), e: 4e9 })).toString('base64url')}.forged`,
    });
    expect(forged.status).toBe(302);
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
    expect(out.headers.getSetCookie().join('\n')).toMatch(/demo_session=; .*Max-Age=0/);
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
});

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
