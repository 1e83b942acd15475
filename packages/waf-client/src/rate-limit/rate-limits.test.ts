/**
 * Rate-limit counters in the client: constant memory under a flood of rotating source addresses
 * (bounded, least recently used evicted, evictions counted), counters keyed by (rule, key) that
 * survive a snapshot swap even when rules move, and a changed window starting afresh.
 */
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
): Promise<{ hub: FakeHub; client: TestClient }> {
  const hub = await startFakeHub(SITE_KEY, buildSnapshot(rules, 1));
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
