/**
 * Two hub instances sharing one PostgreSQL database, one Redis and one data directory, as a
 * deployment behind a load balancer would run them: edits split across both coalesce into one
 * build, concurrent edits are all kept, and builds of a site never overlap, whichever instance
 * runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { type RedisServerHandle, startRedisServer } from '@rampart/test-services/redis-server';
import { randomToken } from '@rampart/test-services/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuildView,
  decide,
  HubClient,
  request,
  type SiteView,
  waitFor,
} from '../test-support/hub-client.js';
import { freshPostgresDatabase, stopPostgres } from '../test-support/hub-stack.js';

/**
 * Each edit pushes the pending build back by this much, so the edits (sent all at once) make one
 * build as long as no two of them commit further apart than this, with room to spare on a busy
 * machine.
 */
const DEBOUNCE_MS = 2000;

describe('two hub instances on one PostgreSQL database, Redis and data directory', () => {
  let redis: RedisServerHandle;
  let dataDir: string;
  let hubs: Hub[] = [];
  let a: HubClient;
  let b: HubClient;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rampart-cluster-'));
    const [server, databaseUrl] = await Promise.all([startRedisServer(), freshPostgresDatabase()]);
    redis = server;
    const adminToken = randomToken();
    const options = {
      redis,
      databaseUrl,
      dataDir,
      adminToken,
      env: { HUB_BUILD_DEBOUNCE_MS: String(DEBOUNCE_MS) },
    };
    // Started together: both migrate the same empty database at once.
    hubs = await Promise.all([startHub(options), startHub(options)]);
    a = new HubClient(hubs[0]?.url ?? '', adminToken);
    b = a.of({ url: hubs[1]?.url ?? '', adminToken });
  });

  afterAll(async () => {
    // Each hub checks its output against the admin token; `a` knows the site keys both issued.
    await Promise.all(hubs.map((hub) => hub.close()));
    for (const [i, hub] of hubs.entries()) a.expectNoSecret(`the output of hub ${i}`, hub.output());
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await stopPostgres();
  });

  /** Waits until every change of the site is built and no build runs. */
  const settled = async (siteId: string, timeoutMs = 30_000) => {
    let last = '';
    try {
      return await waitFor(
        `site ${siteId} to settle`,
        async () => {
          const site = await a.getSite(siteId);
          const builds = await a.builds(siteId);
          last = JSON.stringify({ site, builds });
          if (site.builtRevision !== site.rulesRevision) return undefined;
          return builds.some((x) => x.status === 'running') ? undefined : site;
        },
        timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; last seen: ${last}`);
    }
  };

  /** Builds of one site never run at the same time: sorted by start, each starts after the last ended. */
  const expectNoOverlap = (builds: readonly BuildView[]) => {
    const sorted = [...builds].sort((x, y) => x.startedAt.localeCompare(y.startedAt));
    for (let i = 1; i < sorted.length; i++) {
      const previous = sorted[i - 1] as BuildView;
      const next = sorted[i] as BuildView;
      expect(previous.finishedAt, 'a build never finished').not.toBeNull();
      expect(
        Date.parse(next.startedAt),
        `build ${next.id} (${next.hubInstance}) started before ${previous.id} (${previous.hubInstance}) finished`,
      ).toBeGreaterThanOrEqual(Date.parse(previous.finishedAt ?? ''));
    }
  };

  it('coalesces a burst of 20 edits split across both instances into exactly one build', async () => {
    const { key } = await a.createSite('Shop', 'shop');
    const first = await b.admin('POST', '/v1/sites/shop/rules', {
      id: 'base',
      type: 'ip',
      action: 'block',
      ranges: ['203.0.113.0/24'],
    });
    expect(first.status, first.text).toBe(201);
    const baseline = await settled('shop');
    expect(baseline.currentVersion).toBe(1);

    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).admin('POST', '/v1/sites/shop/rules', {
          id: `ua-${i}`,
          type: 'pattern',
          action: 'block',
          when: [{ field: 'user_agent', match: 'contains', value: `bot-${i}` }],
        }),
      ),
    );
    const burstMs = performance.now() - started;
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));

    const site: SiteView = await settled('shop');
    // Every edit was kept and bumped the revision exactly once (no lost update between instances).
    expect(site.rulesRevision).toBe(baseline.rulesRevision + 20);
    const rules = await b.admin<{ rules: { id: string }[] }>('GET', '/v1/sites/shop/rules');
    expect(rules.body.rules).toHaveLength(21);

    const builds = await a.builds('shop');
    const after = builds.filter((x) => x.rulesRevision > baseline.rulesRevision);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      status: 'succeeded',
      version: 2,
      rulesRevision: site.rulesRevision,
    });
    expectNoOverlap(builds);

    // Both instances serve the same snapshot, which holds every rule.
    const [fromA, fromB] = await Promise.all([a.site(key), b.site(key)]);
    expect(fromA.headers.get('etag')).toBe(fromB.headers.get('etag'));
    expect(fromA.headers.get('x-rampart-snapshot-version')).toBe('2');
    const { ruleIds, decisions } = await decide(fromB.bytes, [
      request({ userAgent: 'Mozilla/5.0 (BOT-7)' }),
      request({ ip: '203.0.113.9' }),
    ]);
    expect(ruleIds).toHaveLength(21);
    expect(decisions.map((d) => d.ruleId)).toEqual(['ua-7', 'base']);
    console.log(
      `[cluster] 20 edits across 2 instances in ${Math.round(burstMs)} ms -> ${after.length} build (by ${after[0]?.hubInstance})`,
    );
  });

  it('never runs two builds of a site at once, while both instances keep asking', async () => {
    // A country dataset big enough that a build takes a noticeable time.
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) {
      const x = 1 + (i >> 16);
      lines.push(`${x}.${(i >> 8) & 255}.${i & 255}.0,${x}.${(i >> 8) & 255}.${i & 255}.255,XA`);
    }
    const uploaded = await a.admin('PUT', '/v1/datasets/country/geo', undefined, {
      raw: `${lines.join('\n')}\n`,
      headers: { 'content-type': 'text/csv' },
    });
    expect(uploaded.status, uploaded.text).toBe(200);
    await a.createSite('Busy', 'busy');

    // For two and a half seconds, edits and explicit rebuild requests alternate between instances.
    const until = performance.now() + 2500;
    for (let i = 0; performance.now() < until; i++) {
      const hub = i % 2 === 0 ? a : b;
      const edit = await hub.admin('POST', '/v1/sites/busy/rules/import', {
        rules: [{ id: `geo-${i}`, type: 'country', action: 'block', countries: ['XA'] }],
      });
      expect(edit.status, edit.text).toBe(200);
      expect((await hub.admin('POST', '/v1/sites/busy/builds')).status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const site = await settled('busy');
    const builds = await a.builds('busy');
    expect(builds.every((x) => x.status === 'succeeded')).toBe(true);
    expect(builds.length).toBeGreaterThanOrEqual(2);
    expectNoOverlap(builds);
    expect(builds[0]).toMatchObject({ rulesRevision: site.rulesRevision });
    const by = new Set(builds.map((x) => x.hubInstance));
    console.log(
      `[cluster] ${builds.length} builds of one site under constant requests, run by ${by.size} instance(s), none overlapping`,
    );
  });
});
