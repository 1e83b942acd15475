/**
 * Internal endpoints for `npm run bench:middleware`, mounted only when DEMO_BENCH_ENDPOINTS=true
 * (never in a normal start):
 *
 * - `GET /__bench/loop-delay`: the event-loop delay histogram since the last reset, in ms
 *   (`max` is the longest stall); `?reset=1` starts a new window.
 * - `GET /__bench/waf`: the WAF client's `stats()` (snapshot version, counters).
 *
 * The WAF sees these like any other route; the bench reads them outside its timed windows.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import express, { type Router } from 'express';
import type { Waf } from '../waf/waf.js';

export function benchRoutes(waf: Waf | null): Router {
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
  router.get('/__bench/waf', (_req, res) => {
    res.json(waf ? waf.stats() : null);
  });
  return router;
}
