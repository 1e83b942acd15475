/**
 * The probes of `npm run bench:middleware`, mounted by the benchmark's own app (`bench-app.ts`),
 * never by the demo as shipped:
 *
 * - `GET /__bench/loop-delay`: the event-loop delay histogram since the last reset, in ms
 *   (`max` is the longest stall); `?reset=1` starts a new window.
 * - `POST /__bench/stalls/start`, then `POST /__bench/stalls/stop`: the event-loop stalls in
 *   between, each with its end time (see `StallRecorder`), to match them to a snapshot swap.
 * - `GET /__bench/waf`: the WAF client's `stats()` (snapshot version, counters).
 * - `POST /__bench/waf-switch?to=waf|deferred` (with BENCH_APP_STAGE=switch): requests from
 *   now on go through the WAF, or are only held to the end of their turn (see `WafSwitch`).
 *
 * The WAF sees these like any other route; the bench reads them outside its timed windows.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Waf } from '@rampart/client-demo/waf/waf';
import express, { type Router } from 'express';
import { StallRecorder } from './stall-recorder.ts';
import type { WafSwitch } from './turn-deferral.ts';

export function benchRoutes(waf: Waf | null, wafSwitch: WafSwitch | null = null): Router {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const router = express.Router();
  router.get('/__bench/loop-delay', (req, res) => {
    const ms = (ns: number) => Math.round(ns / 1e3) / 1e3;
    const body = {
      count: histogram.count,
      maxMs: ms(histogram.max),
      p99Ms: ms(histogram.percentile(99)),
      p50Ms: ms(histogram.percentile(50)),
    };
    if (req.query.reset === '1') histogram.reset();
    res.json(body);
  });
  const stalls = new StallRecorder();
  router.post('/__bench/stalls/start', (_req, res) => {
    stalls.start();
    res.json({ started: true });
  });
  router.post('/__bench/stalls/stop', (_req, res) => {
    res.json(stalls.stop());
  });
  router.get('/__bench/waf', (_req, res) => {
    res.json(waf ? waf.stats() : null);
  });
  router.post('/__bench/waf-switch', (req, res) => {
    const to = req.query.to;
    if (!wafSwitch || (to !== 'waf' && to !== 'deferred')) {
      res
        .status(wafSwitch ? 400 : 404)
        .json({ error: wafSwitch ? 'to must be waf or deferred' : 'no switch' });
      return;
    }
    wafSwitch.useWaf = to === 'waf';
    res.json({ to });
  });
  return router;
}
