/**
 * Rate-limit counters in the client: constant memory under a flood of rotating source addresses
 * (bounded, least recently used evicted, evictions counted), counters keyed by (rule, key) that
 * survive a snapshot swap even when rules move, and a changed window starting afresh.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  endOfTurn,
  eventually,
  handOver,
  SITE_KEY,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { buildSnapshot } from '../test-support/snapshots.js';
import {
  FLEET_SIZE_TRUST_MS,
  MAX_REPORTED_KEYS,
  SharedRateLimits,
  shareOf,
} from './rule-keyed-limiter.js';

const LOGIN = {
  id: 'login',
  type: 'rate_limit',
  when: [{ field: 'path', match: 'exact', value: '/login' }],
  key: { kind: 'ip' },
  windowSeconds: 60,
  limit: 5,
};

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(
  rules: unknown[],
  options: Parameters<typeof testClient>[0] = {},
  fleetSize: number | null = null,
): Promise<{ hub: FakeHub; client: TestClient }> {
  const hub = await startFakeHub(SITE_KEY, buildSnapshot(rules, 1));
  hub.fleetSize = fleetSize;
  cleanup.push(() => hub.close());
  const client = testClient({ hubUrl: hub.url, passSampleRate: 0, ...options });
  cleanup.push(() => client.close());
  await client.rampart.ready();
  return { hub, client };
}

/** 200 if a request passed, else the status it was refused with, once its turn has ended. */
async function hit(client: TestClient, ip: string, path = '/login'): Promise<number> {
  const sent = handOver(client.rampart, path, { ip });
  await endOfTurn();
  const outcome = sent.outcome();
  return outcome === 'next' ? 200 : (outcome as number);
}

describe('rate limits', () => {
  it('hold constant memory under a flood of rotating addresses', async () => {
    const { client } = await setup([LOGIN], { rateLimitCapacity: 1000 });
    // the attacker's own address keeps hitting between waves of fresh addresses
    for (let i = 0; i < 5; i++) expect(await hit(client, '192.0.2.1')).toBe(200);
    // one turn of the event loop, one batch of 50 000 requests
    for (let i = 0; i < 50_000; i++)
      handOver(client.rampart, '/login', {
        ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      });
    await endOfTurn();
    const { rateLimits } = client.rampart.stats();
    expect(rateLimits.keys).toBe(1000);
    expect(rateLimits.evictions).toBe(50_000 + 1 - 1000);
    // a key hit within the last `capacity` distinct keys is still counted
    for (let i = 0; i < 5; i++) expect(await hit(client, '192.0.2.2')).toBe(200);
    expect(await hit(client, '192.0.2.2')).toBe(429);
  });

  it('keep their counts across a snapshot swap, even when the rule moves', async () => {
    const { hub, client } = await setup([LOGIN], { syncIntervalMs: 100 });
    for (let i = 0; i < 5; i++) expect(await hit(client, '192.0.2.9')).toBe(200);
    hub.snapshot = buildSnapshot(
      [{ id: 'first-now', type: 'ip', action: 'block', ranges: ['203.0.113.1'] }, LOGIN],
      2,
    );
    await eventually('version 2', () => client.rampart.stats().snapshotVersion === 2);
    expect(await hit(client, '192.0.2.9')).toBe(429); // a swap gives no fresh allowance
    // a new window length is a new policy: counts start afresh
    hub.snapshot = buildSnapshot([{ ...LOGIN, windowSeconds: 120 }], 3);
    await eventually('version 3', () => client.rampart.stats().snapshotVersion === 3);
    expect(await hit(client, '192.0.2.9')).toBe(200);
  });
});

describe('fleet-wide limits', () => {
  it("are enforced as this instance's share, ceil(limit / live instances) as the hub counts them", async () => {
    const { client } = await setup([LOGIN], {}, 3); // limit 5 over 3 instances: 2 each
    for (let i = 0; i < 2; i++) expect(await hit(client, '192.0.2.30')).toBe(200);
    expect(await hit(client, '192.0.2.30')).toBe(429);
  });

  it('are enforced whole by a client alone, or one whose hub does not count instances', async () => {
    for (const fleet of [1, null]) {
      const { client } = await setup([LOGIN], {}, fleet);
      for (let i = 0; i < 5; i++) expect(await hit(client, '192.0.2.31')).toBe(200);
      expect(await hit(client, '192.0.2.31')).toBe(429);
    }
  });

  it('go back to the whole limit when the hub has not answered for a while', () => {
    const limits = new SharedRateLimits(100);
    const t0 = 1_000_000;
    expect(limits.fleetSizeAt(t0)).toBe(1); // never heard
    limits.heardFleetSize(4, t0);
    expect(limits.fleetSizeAt(t0 + FLEET_SIZE_TRUST_MS)).toBe(4);
    expect(limits.fleetSizeAt(t0 + FLEET_SIZE_TRUST_MS + 1)).toBe(1); // cut off: whole limit
    limits.heardFleetSize(null, t0);
    expect(limits.fleetSizeAt(t0)).toBe(1);
  });

  it('share so that the fleet admits at least the limit and less than one more per instance', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (limit, n) => {
          const share = shareOf(limit, n);
          expect(share).toBeGreaterThanOrEqual(1);
          expect(share * n).toBeGreaterThanOrEqual(limit);
          if (share > 1) expect((share - 1) * n).toBeLessThan(limit);
        },
      ),
    );
  });

  it('report the hits per rule and key of each period, bounded in keys', () => {
    const limits = new SharedRateLimits(100_000);
    const series = limits.forEvaluator().series('login', 60_000);
    for (let i = 0; i < 3; i++) series.hit('192.0.2.1', 5, 1000);
    series.hit('192.0.2.2', 5, 1000);
    limits.forEvaluator().series('api', 60_000).hit('k', 100, 1000);
    expect(limits.takeKeyCounts()).toEqual(
      expect.arrayContaining([
        { ruleId: 'login', key: '192.0.2.1', count: 3 },
        { ruleId: 'login', key: '192.0.2.2', count: 1 },
        { ruleId: 'api', key: 'k', count: 1 },
      ]),
    );
    expect(limits.takeKeyCounts()).toEqual([]); // taken
    for (let i = 0; i < MAX_REPORTED_KEYS + 50; i++)
      series.hit(`10.0.${i >> 8}.${i & 255}`, 5, 1000);
    series.hit('10.0.0.0', 5, 1000); // a key already counted still counts
    const counts = limits.takeKeyCounts();
    expect(counts).toHaveLength(MAX_REPORTED_KEYS);
    expect(counts.find((c) => c.key === '10.0.0.0')?.count).toBe(2);
  });
});
