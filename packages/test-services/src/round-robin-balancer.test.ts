import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Balancer, startBalancer } from './round-robin-balancer.js';

/** Upstreams that answer their name and the X-Forwarded-For they saw. */
const servers: Server[] = [];
const urls: string[] = [];
let balancer: Balancer;

beforeAll(async () => {
  for (const name of ['a', 'b', 'c']) {
    const server = createServer((req, res) => {
      res.end(`${name} ${req.headers['x-forwarded-for']}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  balancer = await startBalancer(urls);
});
afterAll(async () => {
  await balancer.close();
  for (const s of servers) s.close();
});

const get = async (headers: Record<string, string> = {}) =>
  (await fetch(`${balancer.url}/`, { headers })).text();

describe('the round-robin balancer', () => {
  it('sends each request to the next instance, appending the peer to X-Forwarded-For', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await get({ 'x-forwarded-for': '203.0.113.5' }));
    expect(answers.map((a) => a.split(' ')[0])).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(answers[0]).toBe('a 203.0.113.5, 127.0.0.1');
    expect(await get()).toMatch(/^a 127\.0\.0\.1$/);
    expect([...balancer.served.values()]).toEqual([3, 2, 2]);
  });

  it('follows a changed fleet, and answers 502 for an instance that is down, 503 for none', async () => {
    balancer.setUpstreams([urls[1] as string]);
    expect((await get()).split(' ')[0]).toBe('b');
    balancer.setUpstreams(['http://127.0.0.1:1']);
    expect((await fetch(balancer.url)).status).toBe(502);
    balancer.setUpstreams([]);
    expect((await fetch(balancer.url)).status).toBe(503);
  });
});
