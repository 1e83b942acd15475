/**
 * Every decision type through the real node:http middleware, with its response and headers:
 * block, rate limit, monitor (rule and global), allow, pass (RateLimit headers only on refusals by
 * default, on counted passes too with `rateLimitHeaders: 'all'`),
 * mode off, fail open / fail closed, an error inside the WAF, request ids, IPv6 clients, and
 * spoofed X-Forwarded-For from an untrusted peer. The snapshot comes from a real HTTP server
 * playing the hub.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  call,
  endOfTurn,
  fakeRequest,
  fakeResponse,
  SITE_KEY,
  startApp,
  type TestApp,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let hub: FakeHub;
beforeAll(async () => {
  hub = await startFakeHub(SITE_KEY, buildSnapshot(STANDARD_RULES, 7));
});
afterAll(() => hub.close());

describe('enforce mode (node:http, IPv4 and IPv6 loopback)', () => {
  let client: TestClient;
  let app: TestApp;
  let app6: TestApp;
  beforeAll(async () => {
    client = testClient({ hubUrl: hub.url, trustedProxies: ['127.0.0.1', '::1'] });
    await client.rampart.ready();
    app = await startApp(client.rampart);
    app6 = await startApp(client.rampart, '::1');
  });
  afterAll(async () => {
    await app.close();
    await app6.close();
    await client.close();
  });

  it('passes a clean request and leaves the decision on req.rampart', async () => {
    const answer = await call(app.port, '/products?page=2');
    expect(answer.status).toBe(200);
    expect(answer.info).toMatchObject({
      clientIp: '127.0.0.1',
      mode: 'enforce',
      decision: {
        action: 'pass',
        mode: 'enforce',
        ruleId: null,
        snapshotVersion: 7,
        rateLimit: null,
      },
    });
    expect(answer.info?.requestId).toMatch(UUID);
    expect(answer.info?.timings.resolveIpMs).toBeGreaterThanOrEqual(0);
    expect(answer.info?.timings.evaluateMs).toBeGreaterThanOrEqual(0);
    expect(answer.headers.ratelimit).toBeUndefined();
  });

  it('blocks with the configured response, the request id in a header and the body', async () => {
    const answer = await call(app.port, '/wp-admin/install.php');
    expect(answer.status).toBe(403);
    expect(answer.headers['x-request-id']).toMatch(UUID);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.body).toBe(`Forbidden (request id ${answer.headers['x-request-id']})\n`);
    // the path is normalised by the evaluator: an encoded spelling is caught too
    expect((await call(app.port, '/%77p-admin/')).status).toBe(403);
  });

  it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
    const kept = await call(app.port, '/wp-admin', { headers: { 'x-request-id': 'lb-1234.abc' } });
    expect(kept.headers['x-request-id']).toBe('lb-1234.abc');
    const replaced = await call(app.port, '/wp-admin', { headers: { 'x-request-id': '<script>' } });
    expect(replaced.headers['x-request-id']).toMatch(UUID);
  });

  it('answers HEAD refusals without a body', async () => {
    const answer = await call(app.port, '/wp-admin', { method: 'HEAD' });
    expect(answer.status).toBe(403);
    expect(answer.body).toBe('');
  });

  it('blocks an address rule through a trusted proxy, but not a spoofed X-Forwarded-For', async () => {
    const viaProxy = await call(app.port, '/', { headers: { 'x-forwarded-for': '203.0.113.66' } });
    expect(viaProxy.status).toBe(403);
    // The same header from an untrusted peer (::1 is trusted on app6, so use a client whose
    // peer is not trusted: a second client trusting nobody).
    const strict = testClient({ hubUrl: hub.url });
    await strict.rampart.ready();
    const strictApp = await startApp(strict.rampart);
    try {
      const spoofed = await call(strictApp.port, '/', {
        headers: { 'x-forwarded-for': '203.0.113.66' },
      });
      expect(spoofed.status).toBe(200);
      expect(spoofed.info?.clientIp).toBe('127.0.0.1');
      // and a spoofer cannot escape a block by claiming an allow-listed office address
      const claimed = await call(strictApp.port, '/wp-admin', {
        headers: { 'x-forwarded-for': '198.51.100.1' },
      });
      expect(claimed.status).toBe(403);
    } finally {
      await strictApp.close();
      await strict.close();
    }
  });

  it('allows an allow-listed address even on a blocked path', async () => {
    const answer = await call(app.port, '/wp-admin', {
      headers: { 'x-forwarded-for': '198.51.100.1' },
    });
    expect(answer.status).toBe(200);
    expect(answer.info?.decision).toMatchObject({
      action: 'allow',
      ruleId: 'office',
      category: 'ip',
    });
  });

  it('serves IPv6 clients: the socket address and IPv6 rules', async () => {
    const direct = await call(app6.port, '/', { host: '::1' });
    expect(direct.status).toBe(200);
    expect(direct.info?.clientIp).toBe('::1');
    const blocked = await call(app6.port, '/', {
      host: '::1',
      headers: { 'x-forwarded-for': '2001:DB8:BAD:0:0:0:0:7' },
    });
    expect(blocked.status).toBe(403);
    const other = await call(app6.port, '/', {
      host: '::1',
      headers: { 'x-forwarded-for': '2001:db8:600d::7' },
    });
    expect(other.info?.clientIp).toBe('2001:db8:600d::7');
    expect(other.status).toBe(200);
  });

  it('rate limits with 429, Retry-After and RateLimit headers; passing requests carry none by default', async () => {
    const headers = { 'x-forwarded-for': '192.0.2.77' };
    const passed = [];
    for (let i = 0; i < 3; i++)
      passed.push(await call(app.port, '/login', { method: 'POST', headers }));
    expect(passed.map((a) => a.status)).toEqual([200, 200, 200]);
    // the limit and what is left are not advertised to a client that is not being refused
    expect(passed.map((a) => a.headers.ratelimit)).toEqual([undefined, undefined, undefined]);
    expect(passed.map((a) => a.headers['ratelimit-policy'])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(passed[0]?.info?.decision).toMatchObject({
      action: 'pass',
      rateLimit: { ruleId: 'login', limit: 3, remaining: 2 },
    });
    const limited = await call(app.port, '/login', { method: 'POST', headers });
    expect(limited.status).toBe(429);
    const reset = Number(limited.headers['retry-after']);
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
    expect(limited.headers.ratelimit).toBe(`"login";r=0;t=${reset}`);
    expect(limited.headers['x-request-id']).toMatch(UUID);
    expect(limited.body).toContain(String(limited.headers['x-request-id']));
    // other clients and other paths are not affected
    expect(
      (
        await call(app.port, '/login', {
          method: 'POST',
          headers: { 'x-forwarded-for': '192.0.2.78' },
        })
      ).status,
    ).toBe(200);
    expect((await call(app.port, '/login', { headers })).status).toBe(200);
  });

  it('lets a monitor-mode rule match pass, reporting what would have happened', async () => {
    const answer = await call(app.port, '/', { headers: { 'user-agent': 'sqlmap/1.7' } });
    expect(answer.status).toBe(200);
    expect(answer.info?.decision).toMatchObject({
      action: 'block',
      mode: 'monitor',
      ruleId: 'scanner',
    });
  });

  it('counts everything in stats()', () => {
    const stats = client.rampart.stats();
    expect(stats.requests).toBeGreaterThan(10);
    expect(stats.decisions.block).toBeGreaterThan(0);
    expect(stats.decisions.rate_limit).toBe(1);
    expect(stats.decisions.allow).toBe(1);
    expect(stats.refused.rateLimited).toBe(1);
    expect(stats.monitored).toBe(1);
    expect(stats.snapshotVersion).toBe(7);
    expect(stats.errors).toBe(0);
  });
});

describe('modes and failure', () => {
  it('global monitor mode evaluates but never blocks (and sends no rate-limit headers)', async () => {
    const client = testClient({ hubUrl: hub.url, mode: 'monitor', rateLimitHeaders: 'all' });
    await client.rampart.ready();
    const app = await startApp(client.rampart);
    try {
      const answer = await call(app.port, '/wp-admin');
      expect(answer.status).toBe(200);
      expect(answer.info).toMatchObject({
        mode: 'monitor',
        decision: { action: 'block', ruleId: 'wp' },
      });
      for (let i = 0; i < 5; i++) {
        const login = await call(app.port, '/login', { method: 'POST' });
        expect(login.status).toBe(200);
        expect(login.headers.ratelimit).toBeUndefined();
      }
      expect(client.rampart.stats().monitored).toBe(3); // the block and two rate limits
    } finally {
      await app.close();
      await client.close();
    }
  });

  it("rateLimitHeaders 'all' puts RateLimit headers on passing requests a limit counted", async () => {
    const client = testClient({ hubUrl: hub.url, rateLimitHeaders: 'all' });
    await client.rampart.ready();
    const app = await startApp(client.rampart);
    try {
      const passed = [];
      for (let i = 0; i < 3; i++) passed.push(await call(app.port, '/login', { method: 'POST' }));
      expect(passed.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(passed[0]?.headers['ratelimit-policy']).toBe('"login";q=3;w=60');
      expect(passed.map((a) => String(a.headers.ratelimit).replace(/;t=\d+$/, ''))).toEqual([
        '"login";r=2',
        '"login";r=1',
        '"login";r=0',
      ]);
      // requests no limit counts carry none
      expect((await call(app.port, '/products')).headers.ratelimit).toBeUndefined();
      const limited = await call(app.port, '/login', { method: 'POST' });
      expect(limited.status).toBe(429);
      expect(limited.headers.ratelimit).toMatch(/^"login";r=0;t=\d+$/);
    } finally {
      await app.close();
      await client.close();
    }
  });

  it('mode off does nothing: no sync, no evaluation', async () => {
    const client = testClient({ hubUrl: hub.url, mode: 'off' });
    const before = hub.requests.length;
    await client.rampart.ready();
    const app = await startApp(client.rampart);
    try {
      const answer = await call(app.port, '/wp-admin');
      expect(answer.status).toBe(200);
      expect(answer.info).toMatchObject({ mode: 'off', decision: null, clientIp: '127.0.0.1' });
      expect(hub.requests.length).toBe(before);
    } finally {
      await app.close();
      await client.close();
    }
  });

  it('fails open, then closed (503), while no snapshot is available', async () => {
    const empty = await startFakeHub(SITE_KEY, null); // answers 404: nothing published yet
    const open = testClient({ hubUrl: empty.url });
    const closed = testClient({ hubUrl: empty.url, failMode: 'closed' });
    await Promise.all([open.rampart.ready(), closed.rampart.ready()]);
    const openApp = await startApp(open.rampart);
    const closedApp = await startApp(closed.rampart);
    try {
      const passed = await call(openApp.port, '/wp-admin');
      expect(passed.status).toBe(200);
      expect(passed.info).toMatchObject({ decision: null, mode: 'enforce' });
      const refused = await call(closedApp.port, '/');
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.headers['x-request-id']).toMatch(UUID);
      expect(open.rampart.stats()).toMatchObject({ noSnapshot: 1, snapshotVersion: null });
      expect(closed.rampart.stats().refused.failedClosed).toBe(1);
      expect(open.rampart.stats().sync.failures).toBeGreaterThanOrEqual(1);
      expect(open.logger.lines.join('\n')).toMatch(/snapshot sync failed .*404.*fail mode applies/);
    } finally {
      await openApp.close();
      await closedApp.close();
      await open.close();
      await closed.close();
      await empty.close();
    }
  });

  it('a refusal that cannot be written is counted, and the request is not left hanging', async () => {
    const client = testClient({ hubUrl: hub.url });
    await client.rampart.ready();
    try {
      const res = fakeResponse();
      res.writeHead = () => {
        throw new Error('socket gone');
      };
      let nextCalls = 0;
      client.rampart.middleware(fakeRequest('/wp-admin'), res, () => nextCalls++);
      await endOfTurn();
      expect(client.rampart.stats().errors).toBe(1);
      expect(nextCalls).toBe(1);
      expect(client.logger.lines.join('\n')).toMatch(
        /could not apply the WAF verdict: socket gone/,
      );
    } finally {
      await client.close();
    }
  });

  it('an error inside the WAF never reaches the app: it fails as configured, logged and counted', async () => {
    for (const failMode of ['open', 'closed'] as const) {
      const client = testClient({ hubUrl: hub.url, failMode });
      await client.rampart.ready();
      try {
        // A request object whose headers explode when read: the WAF must absorb it.
        const req = {
          url: '/',
          method: 'GET',
          socket: { remoteAddress: '192.0.2.1' },
          get headers(): never {
            throw new Error('boom');
          },
        } as unknown as IncomingMessage;
        let status = 0;
        const res = {
          headersSent: false,
          writeHead(code: number) {
            status = code;
            return this;
          },
          end() {},
          setHeader() {},
        } as unknown as ServerResponse;
        let nextCalls = 0;
        client.rampart.middleware(req, res, () => nextCalls++);
        await endOfTurn();
        expect(client.rampart.stats().errors).toBe(1);
        expect(client.logger.lines.join('\n')).toMatch(/evaluation failed.*boom/);
        if (failMode === 'open') expect(nextCalls).toBe(1);
        else expect([nextCalls, status]).toEqual([0, 503]);
        expect(req.rampart).toMatchObject({ decision: null, clientIp: '192.0.2.1' });
      } finally {
        await client.close();
      }
    }
  });
});
