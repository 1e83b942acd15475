import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { benchRoutes } from './bench-routes.ts';
import type { StallRecording } from './stall-recorder.ts';
import { WafSwitch } from './turn-deferral.ts';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(wafSwitch: WafSwitch | null): Promise<string> {
  const app = express();
  app.use(benchRoutes(null, wafSwitch));
  app.post('/block', (req, res) => {
    const until = performance.now() + Number(req.query.ms);
    while (performance.now() < until) {
      // keep the event loop busy
    }
    res.json({ blocked: true });
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const post = (url: string) => fetch(url, { method: 'POST' });

describe('the benchmark endpoints', () => {
  it('record the stalls between start and stop, with their end times', async () => {
    const url = await serve(null);
    await post(`${url}/__bench/stalls/start`);
    const before = Date.now();
    await post(`${url}/block?ms=60`);
    const recording = (await (await post(`${url}/__bench/stalls/stop`)).json()) as StallRecording;
    // The block's stall, found by its time (a loaded machine may add stalls of its own).
    const block = recording.stalls.filter((s) => s.ms >= 60 && s.endedAt >= before + 58);
    expect(block.length).toBeGreaterThanOrEqual(1);
    expect(recording.truncated).toBe(false);
    // Stopped: nothing is recorded until the next start.
    await post(`${url}/block?ms=30`);
    expect(await (await post(`${url}/__bench/stalls/stop`)).json()).toEqual({
      stalls: [],
      truncated: false,
    });
  });

  it('switch the WAF only when the app runs with the switch, and only to waf or deferred', async () => {
    const without = await serve(null);
    expect((await post(`${without}/__bench/waf-switch?to=deferred`)).status).toBe(404);
    const wafSwitch = new WafSwitch((_req, _res, next) => next());
    const url = await serve(wafSwitch);
    expect((await post(`${url}/__bench/waf-switch?to=nothing`)).status).toBe(400);
    expect(wafSwitch.useWaf).toBe(true);
    expect(await (await post(`${url}/__bench/waf-switch?to=deferred`)).json()).toEqual({
      to: 'deferred',
    });
    expect(wafSwitch.useWaf).toBe(false);
  });

  it('report the event-loop delay histogram and reset it on request', async () => {
    const url = await serve(null);
    await post(`${url}/block?ms=100`);
    const first = (await (await fetch(`${url}/__bench/loop-delay?reset=1`)).json()) as {
      maxMs: number;
    };
    expect(first.maxMs).toBeGreaterThanOrEqual(99);
    const second = (await (await fetch(`${url}/__bench/loop-delay`)).json()) as { maxMs: number };
    expect(second.maxMs).toBeLessThan(99);
  });
});
