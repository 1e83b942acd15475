/**
 * Batched evaluation (the default): under load (a second request in the same turn, or a turn
 * after a busy one), requests handed to the middleware during one turn of the event loop are
 * evaluated together at its end, then continue in arrival order, with rate limits counted in that
 * order; an app exception in one request's `next()` does not strand the others. A lone request
 * after a quiet turn, inline evaluation and mode off continue before the middleware returns.
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeHub, startFakeHub } from '../test-support/fake-hub.js';
import {
  call,
  endOfTurn,
  handOver,
  SITE_KEY,
  startApp,
  type TestClient,
  testClient,
} from '../test-support/harness.js';
import { buildSnapshot, STANDARD_RULES } from '../test-support/snapshots.js';

let hub: FakeHub;
beforeAll(async () => {
  hub = await startFakeHub(SITE_KEY, buildSnapshot(STANDARD_RULES, 3));
});
afterAll(() => hub.close());

const clients: TestClient[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const client of clients.splice(0)) await client.close();
});

async function client(options: Parameters<typeof testClient>[0] = {}): Promise<TestClient> {
  const made = testClient({ hubUrl: hub.url, passSampleRate: 0, ...options });
  clients.push(made);
  await made.rampart.ready();
  return made;
}

const send = (test: TestClient, path: string, options?: Parameters<typeof handOver>[2]) =>
  handOver(test.rampart, path, options);

/** A turn that brings two requests: the next turn is then treated as one under load. */
async function busyTurn(test: TestClient): Promise<void> {
  send(test, '/warm-1');
  send(test, '/warm-2');
  await endOfTurn();
}

describe('batched evaluation (the default)', () => {
  it('evaluates a lone request at once when the turn before was quiet', async () => {
    const test = await client();
    expect(send(test, '/a').outcome()).toBe('next');
    expect(send(test, '/wp-admin').outcome()).toBe('waiting'); // a second in the same turn
    await endOfTurn();
    expect(send(test, '/b').outcome()).toBe('waiting'); // the turn before brought two
    await endOfTurn();
    expect(send(test, '/c').outcome()).toBe('next'); // ... and that one brought one
  });

  it('after a busy turn, answers every request at the end of the turn, all evaluated first, in arrival order', async () => {
    const test = await client();
    await busyTurn(test);
    const before = test.rampart.stats().requests;
    const order: string[] = [];
    const seenAtFirstNext: number[] = [];
    const paths = ['/a', '/wp-admin/x', '/b', '/c', '/wp-admin', '/d'];
    const sent = paths.map((path) =>
      send(test, path, {
        next: () => {
          order.push(path);
          seenAtFirstNext.push(test.rampart.stats().requests - before);
        },
      }),
    );
    expect(sent.map((s) => s.outcome())).toEqual(paths.map(() => 'waiting'));
    expect(test.rampart.stats().requests).toBe(before);
    await endOfTurn();
    expect(sent.map((s) => s.outcome())).toEqual(['next', 403, 'next', 'next', 403, 'next']);
    expect(order).toEqual(['/a', '/b', '/c', '/d']);
    // all six were evaluated before the first continued
    expect(seenAtFirstNext[0]).toBe(6);
    expect(sent.map((s) => (s.req as IncomingMessage).rampart?.decision?.action)).toEqual([
      'pass',
      'block',
      'pass',
      'pass',
      'block',
      'pass',
    ]);
  });

  it('counts rate limits in arrival order, whether a request went at once or waited', async () => {
    const test = await client();
    // the login rule allows 3 POSTs per address and minute; the first goes at once
    const sent = Array.from({ length: 6 }, () =>
      send(test, '/login', { ip: '192.0.2.50', method: 'POST' }),
    );
    const other = send(test, '/login', { ip: '192.0.2.51', method: 'POST' });
    await endOfTurn();
    expect(sent.map((s) => s.outcome())).toEqual(['next', 'next', 'next', 429, 429, 429]);
    expect(other.outcome()).toBe('next');
  });

  it('a request handed over while a batch is applied waits for the next turn', async () => {
    const test = await client();
    let late: ReturnType<typeof handOver> | undefined;
    send(test, '/first');
    const second = send(test, '/a', {
      next: () => {
        late = send(test, '/b');
      },
    });
    await endOfTurn();
    expect(second.outcome()).toBe('next');
    expect(late?.outcome()).toBe('waiting');
    await endOfTurn();
    expect(late?.outcome()).toBe('next');
  });

  it("an exception from one waiting request's next() reaches the turn after the others continued", async () => {
    const test = await client();
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    const first = send(test, '/first');
    const failing = send(test, '/b', {
      next: () => {
        throw new Error('the app failed');
      },
    });
    const after = send(test, '/c');
    const also = send(test, '/d', {
      next: () => {
        throw new Error('the app failed again');
      },
    });
    // the batch runs from the faked setImmediate: what it throws comes out here, the first one
    expect(() => vi.runOnlyPendingTimers()).toThrow('the app failed');
    expect([first, failing, after, also].map((s) => s.outcome())).toEqual([
      'next',
      'next',
      'next',
      'next',
    ]);
    // not a WAF failure: nothing counted or logged as one
    expect(test.rampart.stats().errors).toBe(0);
  });

  it('serves a burst of concurrent connections through node:http', async () => {
    const test = await client({ trustedProxies: ['127.0.0.1'] });
    const app = await startApp(test.rampart);
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call(app.port, i % 4 === 0 ? '/wp-admin' : `/page/${i}`),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(
        Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? 403 : 200)),
      );
    } finally {
      await app.close();
    }
  });
  it('answers pipelined requests on one connection in order, a refusal among them', async () => {
    const test = await client();
    const app = await startApp(test.rampart);
    try {
      const socket = connect(app.port, '127.0.0.1');
      await once(socket, 'connect');
      // three requests in one write: they are parsed, and reach the WAF, in one turn
      const request = (path: string, close = false) =>
        `GET ${path} HTTP/1.1\r\nHost: shop.example\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
      socket.end(request('/a') + request('/wp-admin') + request('/b', true));
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('latin1');
      expect([...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => m[1])).toEqual([
        '200',
        '403',
        '200',
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('without batching', () => {
  it("evaluation: 'inline' continues before the middleware returns", async () => {
    const test = await client({ evaluation: 'inline' });
    const pass = send(test, '/a');
    const block = send(test, '/wp-admin');
    expect([pass.outcome(), block.outcome()]).toEqual(['next', 403]);
  });

  it('mode off evaluates nothing and defers nothing', async () => {
    const test = await client({ mode: 'off' });
    const pass = send(test, '/wp-admin');
    expect(pass.outcome()).toBe('next');
    expect((pass.req as IncomingMessage).rampart).toMatchObject({ mode: 'off', decision: null });
  });
});
