import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  percentile,
  runInterleaved,
  splitByVariant,
  summarizeLatencies,
  variantOf,
} from './interleaved-latency.ts';
import { WAF_VARIANT_HEADER } from './turn-deferral.ts';

describe('the interleaved latency measurement', () => {
  it('alternates waf, deferred, deferred, waf so that each setting follows each alike', () => {
    const order = Array.from({ length: 9 }, (_, k) => variantOf(k));
    expect(order).toEqual([
      'waf',
      'deferred',
      'deferred',
      'waf',
      'waf',
      'deferred',
      'deferred',
      'waf',
      'waf',
    ]);
    const follows = new Map<string, number>();
    for (let k = 1; k < 400; k++) {
      const pair = `${variantOf(k - 1)}>${variantOf(k)}`;
      follows.set(pair, (follows.get(pair) ?? 0) + 1);
    }
    expect(follows.get('waf>deferred')).toBe(follows.get('deferred>waf'));
    expect(
      Math.abs((follows.get('waf>waf') ?? 0) - (follows.get('deferred>deferred') ?? 0)),
    ).toBeLessThanOrEqual(1);
  });

  it('takes nearest-rank percentiles', () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(sorted, 50), percentile(sorted, 99), percentile(sorted, 100)]).toEqual([
      50, 99, 100,
    ]);
    expect(percentile(Float64Array.of(7), 99)).toBe(7);
    expect(percentile(new Float64Array(0), 50)).toBeNaN();
    expect(summarizeLatencies(Float64Array.of(3, 1, 2))).toEqual({
      count: 3,
      p50Ms: 2,
      p90Ms: 3,
      p99Ms: 3,
      maxMs: 3,
    });
  });

  it('splits a run by variant, counting from the first timed request', () => {
    // After a warm-up of 2 requests, timed request k is request k + 2: deferred, waf, waf, ...
    const latencies = Float64Array.from({ length: 8 }, (_, k) =>
      variantOf(k + 2) === 'waf' ? 10 + k : k,
    );
    const split = splitByVariant(latencies, 2);
    expect(split.waf.count).toBe(4);
    expect(split.waf.p50Ms).toBeGreaterThanOrEqual(10);
    expect(split.deferred.maxMs).toBeLessThan(10);
    expect(split.quarters).toHaveLength(4);
  });

  describe('against a real server in this process (the client runs in its own)', () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers[WAF_VARIANT_HEADER]} ${req.headers['x-forwarded-for']}`);
      // The WAF's side answers 20 ms later, the other at once: far enough apart that a busy
      // machine (the whole test suite runs in parallel) cannot blur which is which.
      const answer = () =>
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n');
      if (req.headers[WAF_VARIANT_HEADER] === 'waf') setTimeout(answer, 20);
      else answer();
    });
    let url = '';
    const dir = mkdtempSync(join(tmpdir(), 'interleaved-'));
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });

    it('times each variant on one connection and sends each address to both', async () => {
      const result = await runInterleaved({
        url,
        path: '/robots.txt?page=2',
        ips: ['192.0.2.1', '2001:db8::1', '198.51.100.7'],
        requests: 40,
        warmup: 4,
        dir,
      });
      expect(result).toMatchObject({ requests: 40, errors: 0 });
      expect([result.waf.count, result.deferred.count]).toEqual([20, 20]);
      expect(result.waf.p50Ms).toBeGreaterThan(result.deferred.p50Ms);
      expect(result.waf.p50Ms).toBeGreaterThanOrEqual(20);
      expect(seen.slice(0, 6)).toEqual([
        'waf 192.0.2.1',
        'deferred 192.0.2.1',
        'deferred 2001:db8::1',
        'waf 2001:db8::1',
        'waf 198.51.100.7',
        'deferred 198.51.100.7',
      ]);
      expect(seen).toHaveLength(44);
    });

    it('fails with the client output when the server is not there', async () => {
      await expect(
        runInterleaved({
          url: 'http://127.0.0.1:1',
          path: '/',
          ips: ['192.0.2.1'],
          requests: 2,
          warmup: 0,
          dir,
        }),
      ).rejects.toThrow(/ECONNREFUSED/);
    });
  });
});
