/**
 * The whole loop with a fleet: the real hub (its own Redis), three demo instances with the real
 * WAF client syncing from it, behind a round-robin balancer. No stand-in anywhere.
 *
 * - Fleet-wide rate limits: one address over a limit of 30 per minute gets about 30 requests
 *   through the fleet, not 3 x 30; the hub then sums the instances' reports and blocks it.
 * - Time to mitigate: a credential-stuffing burst from many addresses against the login form,
 *   with the hub's default detection settings; the time from the first malicious request to the
 *   first one refused by an automatic block, and until every instance refuses that address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DemoApp, startDemoApp } from '@rampart/test-services/demo-app';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { type Balancer, startBalancer } from '@rampart/test-services/round-robin-balancer';
import { randomToken } from '@rampart/test-services/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../test-support/browser.js';
import { provisionedSite } from '../test-support/provisioned-site.js';

const SITE = 'shop';
const FLEET = 3;

let hub: Hub;
let dir: string;
let apps: DemoApp[] = [];
let balancer: Balancer;

interface Block {
  readonly detector: string;
  readonly subject: { kind: string; addresses?: string[] };
  readonly evidence: { count: number; ruleId?: string };
  readonly createdAt: string;
}

const blocks = () => hub.admin<Block[]>('GET', `/v1/sites/${SITE}/automatic-blocks?status=active`);

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A GET of `path` as `ip` (a client behind the balancer, or straight at one instance). */
const status = async (base: string, path: string, ip: string) =>
  (await fetch(`${base}${path}`, { headers: { 'x-forwarded-for': ip } })).status;

beforeAll(async () => {
  hub = await startHub();
  dir = mkdtempSync(join(tmpdir(), 'rampart-fleet-'));
  const key = await provisionedSite(hub, SITE, dir);
  await hub.addRule(SITE, {
    id: 'catalogue-rate',
    type: 'rate_limit',
    when: [{ field: 'path', match: 'prefix', value: '/products' }],
    key: { kind: 'ip' },
    windowSeconds: 60,
    limit: 30,
  });
  const sessionSecret = randomToken(); // one fleet, one session secret
  apps = await Promise.all(
    Array.from({ length: FLEET }, () =>
      startDemoApp({
        env: {
          RAMPART_MODE: 'enforce',
          RAMPART_HUB_URL: hub.url,
          RAMPART_SITE_KEY: key,
          RAMPART_TRUSTED_PROXIES: '127.0.0.0/8',
          DEMO_SESSION_SECRET: sessionSecret,
        },
      }),
    ),
  );
  balancer = await startBalancer(apps.map((a) => a.url));
  // Every instance on the newest version, and each told the fleet is three strong: the hub
  // answers the held polls of a site whenever an instance joins.
  const { currentVersion } = await hub.admin<{ currentVersion: number }>(
    'GET',
    `/v1/sites/${SITE}`,
  );
  await until('three instances on the newest version', async () => {
    const live = await hub.admin<{ snapshotVersion: number | null }[]>(
      'GET',
      `/v1/sites/${SITE}/instances`,
    );
    return live.length === FLEET && live.every((i) => i.snapshotVersion === currentVersion)
      ? true
      : undefined;
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
}, 120_000);

afterAll(async () => {
  await balancer?.close();
  await Promise.all(apps.map((a) => a.close()));
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a fleet of three behind a round-robin balancer', () => {
  it('admits about the fleet-wide limit from one address, not three times it, then blocks it', async () => {
    const ip = '192.0.2.77';
    const answers: number[] = [];
    for (let i = 0; i < 90; i++) answers.push(await status(balancer.url, '/products', ip));
    const admitted = answers.filter((s) => s === 200).length;
    console.log(`fleet-wide limit 30/min over ${FLEET} instances: ${admitted} of 90 admitted`);
    expect(admitted).toBeGreaterThanOrEqual(27);
    expect(admitted).toBeLessThanOrEqual(33);
    expect(answers.every((s) => s === 200 || s === 429 || s === 403)).toBe(true);
    // The hub summed the instances' counts and blocked the key, everywhere.
    const block = await until('the fleet-wide block', async () =>
      (await blocks()).find(
        (b) => b.detector === 'fleetRateLimits' && b.subject.addresses?.includes(ip),
      ),
    );
    expect(block.evidence).toMatchObject({ ruleId: 'catalogue-rate' });
    expect(block.evidence.count).toBeGreaterThan(30);
    await until('every instance blocking the address', async () => {
      const statuses = await Promise.all(apps.map((a) => status(a.url, '/', ip)));
      return statuses.every((s) => s === 403) ? true : undefined;
    });
  });

  it('stops a credential-stuffing burst within seconds, on every instance', async () => {
    const attackers = Array.from({ length: 10 }, (_, i) => `203.0.113.${i + 1}`);
    const started = performance.now();
    let firstBlocked: { at: number; ip: string } | undefined;
    let firstLimited: number | undefined;
    const deadline = started + 30_000;
    let attempts = 0;
    // Each attacker: the login page for a token, then a leaked e-mail and password, again and
    // again, until it is refused by a block.
    const attack = async (ip: string, n: number) => {
      const browser = new Browser(balancer.url);
      const as = { 'x-forwarded-for': ip };
      for (let i = 0; performance.now() < deadline && firstBlocked === undefined; i++) {
        const page = await browser.get('/login', as);
        const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
        const answer = token
          ? await browser.post(
              '/login',
              { _csrf: token, email: `user${n}-${i}@example.com`, password: `hunter${i}` },
              as,
            )
          : page;
        attempts++;
        if (answer.status === 429) firstLimited ??= performance.now();
        if (answer.status === 403 && /Forbidden/.test(answer.text)) {
          firstBlocked ??= { at: performance.now(), ip };
          return;
        }
      }
    };
    await Promise.all(attackers.map((ip, n) => attack(ip, n)));
    expect(firstBlocked, 'no attacker was ever blocked').toBeDefined();
    const blocked = firstBlocked as { at: number; ip: string };
    await until('every instance refusing the first blocked address', async () => {
      const statuses = await Promise.all(apps.map((a) => status(a.url, '/', blocked.ip)));
      return statuses.every((s) => s === 403) ? true : undefined;
    });
    const allBlocking = performance.now();
    const list = await blocks();
    // When the hub decided, on this clock (the hub runs on this machine).
    const decided =
      Math.min(
        ...list
          .filter((b) => b.subject.addresses?.includes(blocked.ip))
          .map((b) => Date.parse(b.createdAt)),
      ) -
      (Date.now() - performance.now());
    const detectors = [
      ...new Set(
        list
          .filter((b) => b.subject.addresses?.some((a) => attackers.includes(a)))
          .map((b) => b.detector),
      ),
    ];
    const seconds = (ms: number) => (ms / 1000).toFixed(2);
    const clock = Date.now() - performance.now();
    const builds = await hub.admin<{ startedAt: string; finishedAt: string | null }[]>(
      'GET',
      `/v1/sites/${SITE}/builds`,
    );
    // The build that published the block: the first to start once it was decided.
    const published = builds
      .filter((b) => Date.parse(b.startedAt) - clock >= decided - 50 && b.finishedAt)
      .map((b) => Date.parse(b.finishedAt as string) - clock)
      .sort((x, y) => x - y)[0];
    console.log(
      `time to mitigate: first blocked after ${seconds(blocked.at - started)} s (detected at ${seconds(decided - started)} s, published at ${published === undefined ? '-' : seconds(published - started)} s), every instance after ${seconds(allBlocking - started)} s ` +
        `(${attempts} login attempts from ${attackers.length} addresses; first 429 after ${firstLimited === undefined ? '-' : seconds(firstLimited - started)} s; detectors: ${detectors.join(', ')})`,
    );
    expect(detectors.length).toBeGreaterThan(0);
    // Aim: 5 s (about 3.7 s here). The attack is slow on this 2-core VM (the demo's scrypt makes
    // a login cost ~250 ms of CPU, so the fleet serves ~8 logins a second), so no address nears
    // the per-IP threshold in time: the site-wide surge detector fires first. Bounded looser for
    // the machine's slow hours, and the part the WAF owns (detection to refusal) on its own.
    expect(blocked.at - started).toBeLessThan(10_000);
    expect(blocked.at - decided).toBeLessThan(5000);
    expect(allBlocking - blocked.at).toBeLessThan(5000);
  });
});
