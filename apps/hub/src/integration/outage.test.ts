/**
 * Outages against the real hub: Redis really stops (the port refuses connections) and comes back
 * empty on the same port; the management API keeps serving reads, writes still commit and are
 * built once Redis is back, clients keep downloading, and readiness says what is wrong. With
 * PostgreSQL, the hub's database is also taken away to see readiness report it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, request, waitFor } from '../test-support/hub-client.js';
import {
  DATABASE_KINDS,
  type HubStack,
  startStack,
  stopPostgres,
} from '../test-support/hub-stack.js';

afterAll(() => stopPostgres());

interface Readiness {
  status: string;
  details: Record<string, { status: string; message?: string }>;
}

describe.each(DATABASE_KINDS)('outages on %s', (kind) => {
  let stack: HubStack;
  const c = () => stack.client;
  let key: string;

  beforeAll(async () => {
    stack = await startStack(kind);
    ({ key } = await c().createSite('Shop', 'shop'));
    await c().admin('POST', '/v1/sites/shop/rules', {
      id: 'wp',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }],
    });
    await c().waitForVersion('shop', 1);
  });
  afterAll(() => stack?.stop());

  const ready = async () => {
    const started = performance.now();
    const response = await c().admin<Readiness>('GET', '/health/ready', undefined, {
      token: null,
    });
    return { ...response, ms: performance.now() - started };
  };

  it('keeps reads and writes working while Redis is down, and builds once it is back', async () => {
    await stack.redis.pause();

    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.body.details.redis?.status).toBe('down');
    expect(down.body.details.database?.status).toBe('up');
    expect(down.ms).toBeLessThan(3000); // a check never waits for a reconnect

    // Reads.
    expect((await c().admin('GET', '/v1/sites')).status).toBe(200);
    expect((await c().admin('GET', '/v1/sites/shop/rules')).status).toBe(200);
    expect((await c().admin('GET', '/v1/sites/shop/builds')).status).toBe(200);
    expect((await c().admin('GET', '/v1/sites/shop/snapshots')).status).toBe(200);
    const served = await c().site(key);
    expect(served.status).toBe(200);
    expect(served.headers.get('x-rampart-snapshot-version')).toBe('1');

    // Writes that need a build commit (the build request waits a bounded time for Redis).
    const before = await c().getSite('shop');
    const started = performance.now();
    const created = await c().admin('POST', '/v1/sites/shop/rules', {
      id: 'scanner',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
    });
    expect(created.status, created.text).toBe(201);
    expect(performance.now() - started).toBeLessThan(5000);
    const rebuild = await c().admin<{ queued: boolean }>('POST', '/v1/sites/shop/builds');
    expect(rebuild.status).toBe(202);
    expect(rebuild.body).toEqual({ queued: false });
    const during = await c().getSite('shop');
    expect(during.rulesRevision).toBe(before.rulesRevision + 1);
    expect(during.currentVersion).toBe(1);

    // Redis comes back, empty: the reconciler queues the build the change asked for.
    await stack.redis.resume();
    await waitFor('readiness', async () => ((await ready()).status === 200 ? true : undefined));
    const built = await c().waitForVersion('shop', 2, 30_000);
    expect(built.builtRevision).toBe(built.rulesRevision);
    const builds = await c().builds('shop');
    expect(builds.filter((b) => b.status === 'succeeded')).toHaveLength(2);
    const response = await c().site(key);
    expect(response.headers.get('x-rampart-snapshot-version')).toBe('2');
    const { decisions } = await decide(response.bytes, [request({ userAgent: 'sqlmap/1.7' })]);
    expect(decisions[0]).toMatchObject({ action: 'block', ruleId: 'scanner' });
  });

  it.runIf(kind === 'postgres')(
    'survives losing its database connections and reports the outage in readiness',
    async () => {
      const url = new URL(stack.databaseUrl ?? '');
      const database = decodeURIComponent(url.pathname.slice(1));
      url.pathname = '/postgres';
      const superuser = new pg.Client({ connectionString: url.toString() });
      await superuser.connect();
      const name = superuser.escapeIdentifier(database);
      try {
        // The database goes away: new connections are refused, existing ones are terminated.
        await superuser.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
        await superuser.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
          [database],
        );
        const down = await waitFor('readiness to report the database', async () => {
          const answer = await ready();
          return answer.status === 503 ? answer : undefined;
        });
        expect(down.body.details.database?.status).toBe('down');
        expect(down.body.details.redis?.status).toBe('up');
        expect(down.ms).toBeLessThan(3000);
        const live = await c().admin('GET', '/health/live', undefined, { token: null });
        expect(live.status).toBe(200);
        expect((await c().admin('GET', '/v1/sites')).status).toBe(500);

        // It comes back: the hub reconnects by itself.
        await superuser.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
        await waitFor('readiness', async () => ((await ready()).status === 200 ? true : undefined));
        expect((await c().admin('GET', '/v1/sites')).status).toBe(200);
        expect((await c().site(key)).status).toBe(200);
      } finally {
        await superuser.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
        await superuser.end();
      }
    },
  );
});
