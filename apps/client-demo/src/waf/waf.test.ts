/**
 * The demo with the real WAF client in each mode, on a real snapshot written by rules-core into
 * the client's data directory (the client uses it at start; its hub is unreachable, so the
 * snapshot on disk is what decides, as after a hub outage).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';
import { findFreePort } from '@rampart/test-services/free-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../test-support/browser.js';
import { type DemoServer, startDemo } from '../test-support/demo-server.js';
import { installSnapshot } from '../test-support/snapshot-dir.js';
import { withLoginLimit } from './demo-rules.js';
import { createWaf } from './waf.js';

// The demo's own rules, with a login limit a test reaches in three posts.
const RULES = withLoginLimit(2);

const SERVER_TIMING = (action: string, mode: string) =>
  new RegExp(
    `^waf;dur=\\d+\\.\\d{3};desc="${action}/${mode}", ip;dur=\\d+\\.\\d{3}(, app;dur=\\d+\\.\\d{3})?, total;dur=\\d+\\.\\d{3}$`,
  );

const SITE_KEY = 'rk_test_demo_key';

let root: string;
let snapshotFile: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rampart-demo-waf-'));
  snapshotFile = join(root, 'rules.sqlite');
  writeSnapshot(snapshotFile, { ruleSet: parseRuleSet({ rules: RULES }), version: 7 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Mode = 'off' | 'monitor' | 'enforce';

/** A loopback URL nothing listens on (connections are refused). */
async function unreachableHub(): Promise<string> {
  return `http://127.0.0.1:${await findFreePort()}`;
}

/** The demo with a WAF in `mode` whose data directory holds the snapshot. */
async function demoWithWaf(mode: Mode): Promise<{ server: DemoServer; logs: string[] }> {
  const dataDir = mkdtempSync(join(root, `${mode}-`));
  await installSnapshot(dataDir, snapshotFile, 7, SITE_KEY);
  const logs: string[] = [];
  const logger = {
    info: (m: string) => logs.push(m),
    warn: (m: string) => logs.push(m),
    error: (m: string) => logs.push(m),
  };
  const waf = createWaf({
    mode,
    dataDir,
    hubUrl: await unreachableHub(), // nothing listens: the snapshot on disk decides
    siteKey: SITE_KEY,
    logger,
    closeTimeoutMs: 200, // reports have nowhere to go
    env: {},
  });
  await waf.ready();
  if (mode !== 'off') expect(waf.stats().snapshotVersion).toBe(7);
  return { server: await startDemo({ waf }), logs };
}

describe.each([['off'], ['monitor'], ['enforce']] as [Mode][])('the WAF in %s mode', (mode) => {
  let server: DemoServer;
  let logs: string[];
  beforeAll(async () => {
    ({ server, logs } = await demoWithWaf(mode));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lets a normal page through and reports the decision in Server-Timing', async () => {
    const response = await fetch(`${server.url}/products`);
    expect(response.status).toBe(200);
    const timing = response.headers.get('server-timing') ?? '';
    if (mode === 'off')
      expect(timing).toMatch(/^waf;desc="off", app;dur=[\d.]+, total;dur=[\d.]+$/);
    else expect(timing).toMatch(SERVER_TIMING('pass', mode));
  });

  it(`${mode === 'enforce' ? 'blocks' : 'does not block'} a request a block rule matches`, async () => {
    const response = await fetch(`${server.url}/wp-admin/setup-config.php`);
    const timing = response.headers.get('server-timing') ?? '';
    if (mode === 'enforce') {
      expect(response.status).toBe(403);
      expect(await response.text()).toMatch(/^Forbidden \(request id [\w-]+\)/);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(timing).toMatch(SERVER_TIMING('block', 'enforce'));
    } else {
      expect(response.status).toBe(404); // the app's own answer
      expect(await response.text()).toContain('Not found');
      expect(timing).toMatch(
        mode === 'off' ? /^waf;desc="off"/ : SERVER_TIMING('block', 'monitor'),
      );
    }
  });

  it(`${mode === 'enforce' ? 'blocks' : 'does not block'} a scanner's user agent on any page`, async () => {
    const response = await fetch(`${server.url}/`, { headers: { 'user-agent': 'sqlmap/1.8' } });
    expect(response.status).toBe(mode === 'enforce' ? 403 : 200);
  });

  it(`${mode === 'enforce' ? 'rate-limits' : 'does not rate-limit'} login attempts per address`, async () => {
    const statuses: number[] = [];
    const browser = new Browser(server.url);
    const _csrf = await browser.csrfToken('/login');
    for (let i = 0; i < 3; i++) {
      const page = await browser.post('/login', { _csrf, email: 'x@rampart.test', password: 'x' });
      statuses.push(page.status);
      if (page.status === 429) {
        expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(page.headers.get('ratelimit-policy')).toBe('"login-rate";q=2;w=60');
        expect(page.headers.get('server-timing')).toMatch(SERVER_TIMING('rate_limit', 'enforce'));
      }
    }
    expect(statuses).toEqual(mode === 'enforce' ? [401, 401, 429] : [401, 401, 401]);
    // The app told the WAF of each failed login it answered (not of the one the WAF refused).
    expect(server.demo.waf?.stats().reports.signals).toBe(2 + (mode === 'enforce' ? 0 : 1));
  });

  it('never blocks on a monitor-mode rule', async () => {
    const response = await fetch(`${server.url}/.env`);
    expect(response.status).toBe(404);
    const timing = response.headers.get('server-timing') ?? '';
    if (mode !== 'off') expect(timing).toMatch(SERVER_TIMING('block', 'monitor'));
  });

  it('counts what it saw and never logs the site key', () => {
    const stats = server.demo.waf?.stats();
    expect(stats?.requests).toBeGreaterThan(0);
    if (mode === 'enforce') expect(stats?.refused.blocked).toBeGreaterThanOrEqual(2);
    else expect(stats?.refused.blocked).toBe(0);
    expect(logs.join('\n')).not.toContain(SITE_KEY);
  });
});

describe('the WAF before it has any snapshot', () => {
  it.each([
    ['open', 200],
    ['closed', 503],
  ] as const)('fails %s', async (failMode, status) => {
    const waf = createWaf({
      mode: 'enforce',
      failMode,
      dataDir: mkdtempSync(join(root, 'empty-')),
      hubUrl: await unreachableHub(),
      siteKey: SITE_KEY,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      closeTimeoutMs: 200,
      env: {},
    });
    await waf.ready();
    const server = await startDemo({ waf });
    try {
      const response = await fetch(`${server.url}/products`);
      expect(response.status).toBe(status);
      expect(response.headers.get('server-timing')).toMatch(/^waf;desc="unevaluated\/enforce"/);
    } finally {
      await server.stop();
    }
  });
});
