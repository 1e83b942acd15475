/**
 * The Fastify plugin against real Fastify: registered with `fastify.register` (type-checked
 * against Fastify's own types), applying to routes of encapsulated child plugins too
 * (skip-override), with the same responses as the Connect middleware.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import { SITE_KEY, type TestClient, testClient } from '../test-support/harness.js';
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';
import type { RampartRequestInfo } from './request-info.js';

let hub: FakeHub;
let client: TestClient;
let app: FastifyInstance;

beforeAll(async () => {
  hub = await startFakeHub(SITE_KEY, buildSnapshot(STANDARD_RULES, 3));
  // 'all': the adapter's handling of the headers of passing requests is tested too
  client = testClient({ hubUrl: hub.url, trustedProxies: ['127.0.0.1'], rateLimitHeaders: 'all' });
  await client.rampart.ready();
  app = Fastify();
  await app.register(client.rampart.fastifyPlugin);
  // A route in an encapsulated child context: protected only if the hook is not encapsulated.
  await app.register(async (child) => {
    child.get('/child/*', async (request) => ({
      info: (request as unknown as { rampart: RampartRequestInfo }).rampart,
      raw: request.raw.rampart?.requestId,
    }));
  });
  app.get('/', async (request) => ({ info: request.raw.rampart }));
  app.post('/login', async () => ({ ok: true }));
});

afterAll(async () => {
  await app.close();
  await client.close();
  await hub.close();
});

describe('fastifyPlugin', () => {
  it('passes clean requests and exposes the decision on request.rampart and request.raw.rampart', async () => {
    const answer = await app.inject({
      method: 'GET',
      url: '/child/ok',
      remoteAddress: '192.0.2.10',
    });
    expect(answer.statusCode).toBe(200);
    const body = answer.json() as { info: RampartRequestInfo; raw: string };
    expect(body.info).toMatchObject({
      clientIp: '192.0.2.10',
      decision: { action: 'pass', snapshotVersion: 3 },
    });
    expect(body.raw).toBe(body.info.requestId);
  });

  it('blocks, including in encapsulated child plugins', async () => {
    const root = await app.inject({
      method: 'GET',
      url: '/wp-admin/x',
      remoteAddress: '192.0.2.10',
    });
    expect(root.statusCode).toBe(403);
    const child = await app.inject({
      method: 'GET',
      url: '/child/x',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.66' },
    });
    expect(child.statusCode).toBe(403);
    expect(child.headers['x-request-id']).toBeTruthy();
    expect(child.body).toContain(String(child.headers['x-request-id']));
    expect(child.headers['cache-control']).toBe('no-store');
  });

  it('rate limits with 429 and the RateLimit headers', async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof app.inject>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await app.inject({ method: 'POST', url: '/login', remoteAddress: '192.0.2.99' });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last?.headers['retry-after']).toMatch(/^\d+$/);
    expect(last?.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
    expect(last?.headers.ratelimit).toMatch(/^"login";r=0;t=\d+$/);
  });

  it('sends RateLimit headers on counted requests that pass', async () => {
    const answer = await app.inject({ method: 'POST', url: '/login', remoteAddress: '192.0.2.98' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers.ratelimit).toMatch(/^"login";r=2;t=\d+$/);
  });

  it('can be registered twice: one hook, requests counted once', async () => {
    const other = Fastify();
    await other.register(client.rampart.fastifyPlugin);
    await other.register(client.rampart.fastifyPlugin);
    other.post('/login', async () => ({ ok: true }));
    const answer = await other.inject({
      method: 'POST',
      url: '/login',
      remoteAddress: '192.0.2.97',
    });
    expect(answer.headers.ratelimit).toMatch(/^"login";r=2;t=\d+$/);
    await other.close();
  });

  it('counts a burst of concurrent requests in arrival order', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        app.inject({ method: 'POST', url: '/login', remoteAddress: '192.0.2.96' }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429, 429]);
  });

  it("applies the same verdicts with evaluation: 'inline'", async () => {
    const inline = testClient({ hubUrl: hub.url, evaluation: 'inline' });
    await inline.rampart.ready();
    const other = Fastify();
    try {
      await other.register(inline.rampart.fastifyPlugin);
      other.get('/*', async () => ({ ok: true }));
      const pass = await other.inject({ method: 'GET', url: '/ok', remoteAddress: '192.0.2.95' });
      const block = await other.inject({
        method: 'GET',
        url: '/wp-admin',
        remoteAddress: '192.0.2.95',
      });
      expect([pass.statusCode, block.statusCode]).toEqual([200, 403]);
    } finally {
      await other.close();
      await inline.close();
    }
  });
});
