/**
 * Prexy configured from the REAL hub (compiled `apps/hub`, its own redis-server): the site's
 * proxy configuration arrives in its snapshot through the waf-client's sync; a new snapshot
 * swaps in under load without failing a request, each response keeping the rules it started
 * with; a snapshot that changes only WAF rules compiles nothing; a configuration that conflicts
 * with another site's is refused and the one in force stays; the edge WAF answers blocked
 * requests before the upstream is contacted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getText } from '@rampart/test-services/http-get';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrexyFile, type SiteEntry } from '../config/prexy-file.js';
import { PrexyServer } from '../server/prexy-server.js';
import { HubSites } from './hub-sites.js';

const SITE = 'shop';
const HOST = 'shop.test';
const PAGE = '<html><body><h1>Acme Shop</h1><p>Shop for shoes at the Shop.</p></body></html>';

let hub: Hub;
let origin: Server;
let originPort = 0;
/** Paths the origin was asked for. */
const seenByOrigin: string[] = [];
let prexy: PrexyServer;
let port = 0;
let hubSites: HubSites;
const warnings: string[] = [];

function get(path: string, host = HOST) {
  return getText(port, path, { host });
}

async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function proxyConfig(replacement: string, edgeWaf = false) {
  return {
    routes: [{ host: HOST, upstream: `http://127.0.0.1:${originPort}` }],
    ruleSets: [{ pathPrefix: '/', rules: [{ pattern: 'Shop', replacement, flags: 'g' }] }],
    edgeWaf,
  };
}

beforeAll(async () => {
  origin = createServer((req, res) => {
    seenByOrigin.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originPort = (origin.address() as AddressInfo).port;

  hub = await startHub();
  const key = await hub.createSite(SITE);
  await hub.admin('PUT', `/v1/sites/${SITE}/proxy`, proxyConfig('Store'));
  await hub.addRule(SITE, {
    id: 'no-wp',
    type: 'pattern',
    action: 'block',
    when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
  });

  const parsed = parsePrexyFile({
    listen: { host: '127.0.0.1', port: 0 },
    accessLog: false,
    sites: [
      {
        name: SITE,
        hub: { url: hub.url, siteKeyEnv: 'SHOP_KEY', dataDir: `${hub.dataDir}/prexy` },
      },
      {
        name: 'local',
        proxy: {
          routes: [{ host: 'local.test', upstream: `http://127.0.0.1:${originPort}` }],
        },
      },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  prexy = new PrexyServer(parsed.file, {
    edgeGuard: (site) => hubSites.guard(site),
    warn: (m) => warnings.push(m),
  });
  hubSites = new HubSites(parsed.file.sites, {
    install: (sites: readonly SiteEntry[]) => prexy.install(sites),
    warn: (m) => warnings.push(m),
    worker: 'test',
    env: { SHOP_KEY: key },
    clientOptions: { syncIntervalMs: 200, syncBackoffMaxMs: 500, reportIntervalMs: 200 },
  });
  port = await prexy.listen();
  await hubSites.ready();
}, 120_000);

afterAll(async () => {
  await prexy?.close(1000);
  await hubSites?.close();
  await new Promise((r) => origin?.close(r));
  await hub?.close();
}, 60_000);

describe('a site configured from the hub', () => {
  it('serves the routes and substitutions its snapshot carries', async () => {
    expect([...prexy.routes.hosts].sort()).toEqual(['local.test', HOST].sort());
    const answer = await get('/');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(PAGE.replaceAll('Shop', 'Store'));
    expect((await get('/', 'local.test')).body).toBe(PAGE); // the file's site, no rules
  });

  it('compiles nothing for a snapshot that changes only WAF rules', async () => {
    const compiled = prexy.sets.compilations;
    const version = await hub.addRule(SITE, {
      id: 'bad-net',
      type: 'ip',
      action: 'block',
      ranges: ['203.0.113.0/24'],
    });
    await eventually(`version ${version}`, () => hubSites.versionOf(SITE) === version);
    expect(prexy.sets.compilations).toBe(compiled);
  });

  it('swaps a new configuration in under load: no request fails, each body is one rule set', async () => {
    const bodies = new Set(['Store', 'Market', 'Bazaar'].map((w) => PAGE.replaceAll('Shop', w)));
    let stop = false;
    const failures: string[] = [];
    let done = 0;
    const client = async () => {
      while (!stop) {
        try {
          const answer = await get('/');
          if (answer.status !== 200 || !bodies.has(answer.body)) {
            failures.push(`${answer.status} ${answer.body.slice(0, 80)}`);
          }
          done++;
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    for (const word of ['Market', 'Bazaar']) {
      await hub.admin('PUT', `/v1/sites/${SITE}/proxy`, proxyConfig(word));
      await eventually(`bodies with ${word}`, async () => (await get('/')).body.includes(word));
    }
    stop = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(done).toBeGreaterThan(50);
  });

  it("refuses a configuration that routes another site's host; the one in force stays", async () => {
    const before = hubSites.versionOf(SITE);
    const conflicting = proxyConfig('Nope');
    conflicting.routes.push({ host: 'local.test', upstream: `http://127.0.0.1:${originPort}` });
    await hub.admin('PUT', `/v1/sites/${SITE}/proxy`, conflicting);
    await eventually('the refusal', () =>
      warnings.some((w) => w.includes('refused') && w.includes('local.test')),
    );
    expect(hubSites.versionOf(SITE)).toBe(before);
    expect((await get('/')).body).toBe(PAGE.replaceAll('Shop', 'Bazaar'));
  });

  it('with the edge WAF on, blocks before the upstream is contacted and passes the rest', async () => {
    await hub.admin('PUT', `/v1/sites/${SITE}/proxy`, proxyConfig('Store', true));
    await eventually('the edge WAF', async () => (await get('/wp-admin/setup.php')).status === 403);
    const reachedBefore = seenByOrigin.length;
    for (let i = 0; i < 5; i++) expect((await get('/wp-admin/setup.php')).status).toBe(403);
    expect(seenByOrigin.length).toBe(reachedBefore);
    const page = await get('/shoes');
    expect(page.status).toBe(200);
    expect(page.body).toBe(PAGE.replaceAll('Shop', 'Store'));
    expect(seenByOrigin.at(-1)).toBe('/shoes');
  });

  it('reports the edge decisions to the hub like an app does', async () => {
    await eventually('the blocked requests counted by the hub', async () => {
      const events = await hub.admin<unknown>('GET', `/v1/sites/${SITE}/events`);
      return JSON.stringify(events).includes('no-wp');
    });
  });
});
