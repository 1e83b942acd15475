/**
 * The hub's `Server-Timing`: `handler` (the controller method, from the handler span
 * interceptor) and `total` (from the first middleware to the headers), on every answer,
 * refusals and errors included (a before-headers hook: `@rampart/telemetry/http/before-headers`).
 *
 *     Server-Timing: handler;dur=3.412, total;dur=4.020
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { msSinceArrival } from '@rampart/telemetry/http/request-clock';
import { serverTiming, type TimingMetric } from '@rampart/telemetry/http/server-timing';
import { handlerMsOf } from './handler-span.interceptor.js';

export function hubServerTiming(req: IncomingMessage, res: ServerResponse): void {
  const metrics: TimingMetric[] = [];
  const handler = handlerMsOf(req);
  if (handler !== undefined) metrics.push({ name: 'handler', dur: handler });
  const total = msSinceArrival(req);
  if (total !== undefined) metrics.push({ name: 'total', dur: total });
  if (metrics.length > 0) res.setHeader('Server-Timing', serverTiming(metrics));
}
