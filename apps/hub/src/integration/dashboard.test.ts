/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the real
 * hub and Redis: log in and out; create a rule, see the hub's validation error next to its
 * field, then success; switch a rule to monitor; report batches arriving while the traffic view
 * is open update its totals and top lists; an automatic block revoked from its view is gone from
 * the next snapshot; a user agent carrying markup renders as text and runs nothing; a request
 * without its CSRF token is refused; an event's trace is read from a real Jaeger and drawn as a
 * waterfall. Any Content-Security-Policy violation or page error fails
 * the test. Screenshots go to `apps/hub/test-output/` (the README shows two of them).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChromium } from '@rampart/test-services/chromium';
import { type JaegerHandle, startJaeger } from '@rampart/test-services/jaeger-server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomaticBlockView } from '../detection/automatic-blocks.service.js';
import { waitFor } from '../test-support/hub-client.js';
import { type HubStack, startStack } from '../test-support/hub-stack.js';
import {
  blockedEvent,
  loginSignal,
  postReport,
  reportBatch,
  snapshotRules,
} from '../test-support/report-batches.js';

/**
 * The browser globals that the functions run inside the page (`page.evaluate`, init scripts)
 * touch: the hub compiles without the DOM library, and these are all the test needs of it.
 */
declare const document: {
  readonly cookie: string;
  readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
  readonly activeElement: { readonly textContent: string | null } | null;
  readonly body: { append(element: unknown): void };
  createElement(name: 'img'): { src: string };
  addEventListener(
    type: 'securitypolicyviolation',
    listener: (e: { violatedDirective: string; blockedURI: string }) => void,
  ): void;
};
declare const window: { readonly __pwned?: number };

const here = dirname(fileURLToPath(import.meta.url));
const screenshots = join(here, '../../test-output');
/** What a report's user agent tries: markup that would run if it were ever parsed as HTML. */
const HOSTILE_AGENT = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

describe('the dashboard in chromium', () => {
  let stack: HubStack;
  let jaeger: JaegerHandle;
  let siteKey: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** CSP violations, page errors and failed console messages seen by any page. */
  const problems: string[] = [];

  const url = (path: string) => `${stack.hub.url}${path}`;
  const shot = (name: string) =>
    page.screenshot({ path: join(screenshots, `dashboard-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    jaeger = await startJaeger();
    stack = await startStack('sqlite', { env: { HUB_JAEGER_QUERY_URL: jaeger.queryUrl } });
    siteKey = (await stack.client.createSite('Demo shop', 'shop')).key;
    browser = await startChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Every violation is reported by the page to its console, where the test collects it.
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    page = await context.newPage();
    page.on('console', (m) => {
      // API refusals the test provokes (401, 403, 422) are logged as failed loads; they are the
      // API's answers, not the page's problems. Failed loads of the page itself are below.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
        problems.push(m.text());
    });
    // The page's own files (its API calls may be refused on purpose, or cut by a navigation).
    const ownFile = (url: string) => new URL(url).pathname.startsWith('/ui/');
    page.on('response', (r) => {
      if (ownFile(r.url()) && r.status() >= 400) problems.push(`${r.status()} for ${r.url()}`);
    });
    page.on('requestfailed', (r) => {
      if (ownFile(r.url())) problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await jaeger?.stop();
  });

  async function login() {
    await page.goto(url('/ui/'));
    await page.getByLabel('Admin token').fill(stack.hub.adminToken);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Sites' }).waitFor();
  }

  it('serves the page at every path under /ui with its policy, assets cached for good', async () => {
    const answer = await fetch(url('/ui/sites/shop/rules'));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await answer.text();
    expect(html).not.toMatch(/<script>|<style>| style=| on[a-z]+=/); // nothing inline
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? '';
    const asset = await fetch(url(script));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(url('/ui/assets/missing-0000.js'))).status).toBe(404);
  });

  it('logs in with the admin token into an HttpOnly, SameSite=Strict session, and out', async () => {
    await page.goto(url('/'));
    expect(page.url()).toBe(url('/ui/'));
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expectText(page.getByRole('alert'), 'That is not the admin token.');

    await login();
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'rampart_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.secure).toBe(false); // loopback; Secure everywhere else
    expect(cookie?.value).not.toContain(stack.hub.adminToken);
    expect(await page.evaluate(() => document.cookie)).toBe(''); // no script reads it
    await expectText(page.getByRole('row', { name: /shop/ }), 'Demo shop');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Admin token').waitFor();
    const after = await page.evaluate(() => fetch('/v1/sites').then((r) => r.status));
    expect(after).toBe(401);
    await page.reload();
    await page.getByLabel('Admin token').waitFor(); // the session is gone, not only the page
  });

  it('creates a rule: the hub’s reason next to the field, then the rule', async () => {
    await login();
    await page.getByRole('link', { name: 'shop' }).click();
    await page.getByRole('link', { name: 'Rules' }).click();
    await page.getByText('No rules: every request passes.').waitFor();
    await page.getByRole('button', { name: 'New rule' }).click();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Id').fill('scanners');
    await form.getByLabel('Addresses and ranges').fill('203.0.113.0/24\n10.0.0.1/33');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const error = form.locator('.field-error[data-field="ranges"]');
    await expectText(error, '/33');
    expect(await form.getByLabel('Addresses and ranges').getAttribute('aria-invalid')).toBe('true');
    expect(
      (await stack.client.admin<{ rules: unknown[] }>('GET', '/v1/sites/shop/rules')).body.rules,
    ).toEqual([]);

    await form.getByLabel('Addresses and ranges').fill('203.0.113.0/24\n10.0.0.0/8');
    await form.getByLabel('Note').fill('scanners seen on <b>Monday</b>');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const row = page.locator('tr[data-rule="scanners"]');
    await expectText(row, '203.0.113.0/24, 10.0.0.0/8');
    await expectText(row, 'scanners seen on <b>Monday</b>'); // the note as text, not markup
    const stored = await stack.client.admin('GET', '/v1/sites/shop/rules/scanners');
    expect(stored.body).toMatchObject({ type: 'ip', action: 'block', mode: 'enforce' });
  });

  it('switches a rule to monitor in place', async () => {
    const toggle = page.getByRole('button', { name: /^scanners: enforce/ });
    await toggle.click();
    await page.getByRole('button', { name: /^scanners: monitor/ }).waitFor();
    const stored = await stack.client.admin('GET', '/v1/sites/shop/rules/scanners');
    expect(stored.body).toMatchObject({ mode: 'monitor' });
  });

  it('exports the rules as a file and imports it back', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('shop-rules.json');
    const file = await download.path();
    const exported = JSON.parse(readFileSync(file, 'utf8')) as { rules: { id: string }[] };
    expect(exported.rules.map((r) => r.id)).toEqual(['scanners']);

    await stack.client.admin('DELETE', '/v1/sites/shop/rules/scanners');
    await page.getByLabel('import mode').selectOption('replace');
    await page.locator('#import-file').setInputFiles({
      name: download.suggestedFilename(),
      mimeType: 'application/json',
      buffer: readFileSync(file),
    });
    await expectText(page.getByRole('status'), 'Imported shop-rules.json (replace)');
    await page.locator('tr[data-rule="scanners"]').waitFor();
    const stored = await stack.client.admin('GET', '/v1/sites/shop/rules/scanners');
    expect(stored.body).toMatchObject({
      mode: 'monitor',
      ranges: ['203.0.113.0/24', '10.0.0.0/8'],
    });
  });

  it('refuses a state-changing request that lacks the session’s CSRF token', async () => {
    const status = await page.evaluate(() =>
      fetch('/v1/sites/shop/rules', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'forged', type: 'ip', action: 'block', ranges: ['0.0.0.0/0'] }),
      }).then((r) => r.status),
    );
    expect(status).toBe(403);
    const forged = await stack.client.admin('GET', '/v1/sites/shop/rules/forged');
    expect(forged.status).toBe(404);
  });

  it('updates the traffic chart and top lists while reports arrive; markup in them stays text', async () => {
    await page.getByRole('link', { name: 'Traffic' }).click();
    await page.getByText('No requests reported in this window.').waitFor();
    const events = [
      ...Array.from({ length: 7 }, () =>
        blockedEvent({ ip: '203.0.113.9', ruleId: 'scanners', category: 'ip' }),
      ),
      ...Array.from({ length: 3 }, () =>
        blockedEvent({
          ip: '198.51.100.4',
          userAgent: HOSTILE_AGENT,
          path: '/<svg onload=alert(1)>',
        }),
      ),
    ];
    const answer = await postReport(
      stack.hub.url,
      siteKey,
      reportBatch({
        counts: [
          { action: 'block', mode: 'enforce', ruleId: 'scanners', outcome: 'blocked', count: 7 },
          { action: 'block', mode: 'enforce', ruleId: 'wp', outcome: 'blocked', count: 3 },
          { action: 'pass', mode: 'enforce', ruleId: null, outcome: 'passed', count: 40 },
        ],
        events,
      }),
    );
    expect(answer.status).toBe(202);
    // No reload: the view polls.
    await expectText(page.locator('.totals li[data-class="blocked"]'), 'blocked: 10', 20_000);
    await expectText(page.locator('.totals li[data-class="passed"]'), 'passed: 40');
    const addresses = page.locator('figure[data-dimension="ip"] li');
    await expectText(addresses.first(), '203.0.113.9');
    await expectText(addresses.first(), '7');
    await expectText(page.locator('figure[data-dimension="user_agent"]'), HOSTILE_AGENT);
    await expectText(page.locator('figure[data-dimension="path"]'), '/<svg onload=alert(1)>');
    expect(await page.locator('figure img, figure script, figure svg').count()).toBe(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    await page.locator('.chart canvas').first().waitFor();
    await shot('traffic');

    await page.getByRole('link', { name: 'Events' }).click();
    await expectText(page.locator('table.events'), HOSTILE_AGENT);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
  });

  it("shows an event's trace, read from Jaeger, with a link to it", async () => {
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const now = Date.now();
    const at = (ms: number) => now - 1000 + ms;
    await jaeger.ingest([
      {
        service: 'rampart-client-demo',
        traceId,
        spanId: '1000000000000001',
        name: 'GET /wp-admin',
        startMs: at(0),
        durationMs: 4.2,
        attributes: { 'http.request.method': 'GET', 'http.response.status_code': 403 },
      },
      {
        service: 'rampart-client-demo',
        traceId,
        spanId: '1000000000000002',
        parentSpanId: '1000000000000001',
        name: 'rampart.waf.evaluate',
        startMs: at(0.3),
        durationMs: 0.02,
        attributes: { 'rampart.waf.action': 'block', 'rampart.waf.rule_id': 'wp' },
      },
    ]);
    await waitFor('the trace in Jaeger', async () => (await jaeger.trace(traceId)) ?? undefined);
    const traced = blockedEvent({
      ip: '198.51.100.23',
      traceparent: `00-${traceId}-1000000000000001-01`,
    });
    expect(
      (await postReport(stack.hub.url, siteKey, reportBatch({ events: [traced] }))).status,
    ).toBe(202);
    await page.getByRole('link', { name: 'Events' }).click();
    await expectText(page.locator('table.events'), '198.51.100.23', 20_000);
    await page.getByRole('button', { name: 'Show' }).first().click();
    const waterfall = page.locator('section.trace');
    await expectText(waterfall, 'rampart.waf.evaluate');
    await expectText(waterfall, 'GET /wp-admin');
    await expectText(waterfall, 'rampart-client-demo');
    expect(await waterfall.getByRole('link', { name: 'Open in Jaeger' }).getAttribute('href')).toBe(
      `${jaeger.queryUrl}/trace/${traceId}`,
    );
    expect(await waterfall.locator('svg rect').count()).toBe(2);
    await shot('trace');
  });

  it('revokes an automatic block, which is gone from the next snapshot', async () => {
    const signals = Array.from({ length: 5 }, () =>
      loginSignal('192.0.2.77', 'login_failed', null),
    );
    expect((await postReport(stack.hub.url, siteKey, reportBatch({ signals }))).status).toBe(202);
    const block = await waitFor('an automatic block of 192.0.2.77', async () =>
      (
        await stack.client.admin<AutomaticBlockView[]>(
          'GET',
          '/v1/sites/shop/automatic-blocks?status=active',
        )
      ).body.find((b) => b.detector === 'failedLoginsPerIp'),
    );
    await waitFor(
      'the block in the snapshot',
      async () =>
        (await snapshotRules(stack.client, siteKey)).some((r) => r.id === block.ruleId) ||
        undefined,
    );

    await page.getByRole('link', { name: 'Automatic blocks' }).click();
    const row = page.locator(`tr[data-block="${block.id}"]`);
    await expectText(row, 'address 192.0.2.77');
    await expectText(row, '5 in 300 s');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expectText(page.getByRole('status'), 'Revoked');
    await row.waitFor({ state: 'detached' }); // the active list no longer has it
    await waitFor(
      'the block out of the snapshot',
      async () =>
        (await snapshotRules(stack.client, siteKey)).every((r) => r.id !== block.ruleId) ||
        undefined,
    );
  });

  it('edits detector settings with the reasons inline, shows the fleet, rotates a key', async () => {
    await page.getByRole('link', { name: 'Detectors' }).click();
    const threshold = page.locator('#failedLoginsPerIp-threshold');
    await threshold.fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expectText(page.locator('.field-error[data-field="failedLoginsPerIp.threshold"]'), '1');
    await threshold.fill('7');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expectText(page.getByRole('status'), 'Saved');
    const settings = await stack.client.admin<{ failedLoginsPerIp: { threshold: number } }>(
      'GET',
      '/v1/sites/shop/detection',
    );
    expect(settings.body.failedLoginsPerIp.threshold).toBe(7);

    await page.getByRole('link', { name: 'Fleet' }).click();
    await expectText(page.locator('table.builds tbody tr').first(), 'v');
    await page.getByRole('heading', { name: 'Instances' }).waitFor();

    await page.getByRole('link', { name: 'Keys' }).click();
    await page.locator('table.keys tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const shown = (await page.locator('.notice code.secret').textContent()) ?? '';
    expect(shown).toMatch(/^rk_[0-9a-f]{16}_/);
    stack.client.secrets.add(shown); // a key, shown once: the hub's log must never hold it
    expect((await stack.client.site(shown, '/v1/snapshot')).status).toBe(200);
  });

  it('is usable on a phone-sized window and by keyboard', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Traffic' }).click();
    await page.locator('.totals').waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('traffic-phone');
    // Tab reaches the site's tabs in order, and Enter follows one.
    await page.getByRole('link', { name: 'Traffic' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Rules');
    await page.keyboard.press('Enter');
    await page.locator('table.rules').waitFor();
    await page.setViewportSize({ width: 1280, height: 900 });
    await expectText(page.locator('tr[data-rule="scanners"] td.hits'), 'would have acted on 7');
    await shot('rules'); // with the last hour's matches, for the README
  });

  it('saw no CSP violation and no page error; the hub received no violation report', async () => {
    expect(problems).toEqual([]);
    const metrics = await stack.client.admin<{ cspViolationReports: number }>('GET', '/v1/metrics');
    expect(metrics.body.cspViolationReports).toBe(0);
  });

  it('hears of a violation: markup injected into the page is blocked and reported', async () => {
    const probe = await context.newPage();
    await probe.goto(url('/ui/'));
    await probe.locator('#app *').first().waitFor();
    await probe.evaluate(() => {
      const element = document.createElement('img');
      element.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw='; // img-src 'self' only
      document.body.append(element);
    });
    await waitFor('the violation reported to the hub', async () => {
      const metrics = await stack.client.admin<{ cspViolationReports: number }>(
        'GET',
        '/v1/metrics',
      );
      return metrics.body.cspViolationReports >= 1 || undefined;
    });
    await probe.close();
  });
});

/** Waits until `locator`'s text contains `text` (the views update asynchronously). */
async function expectText(
  locator: ReturnType<Page['locator']>,
  text: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = (await locator.textContent({ timeout: timeoutMs }).catch(() => '')) ?? '';
    if (last.includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect.fail(`expected "${text}" in ${locator}, found "${last}"`);
}
