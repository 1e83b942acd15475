/**
 * When a request arrived, for the `total` of `Server-Timing`: the first middleware notes the
 * time on the request, and a before-headers hook (`before-headers.ts`) reads the time since.
 * A symbol property, so it never collides with an app's own fields.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

const ARRIVED = Symbol('requestArrived');

type Clocked = IncomingMessage & { [ARRIVED]?: number };

/** Connect/Express middleware: the first one mounted. */
export function startRequestClock(req: IncomingMessage, _res: unknown, next: () => void): void {
  (req as Clocked)[ARRIVED] = performance.now();
  next();
}

/** Milliseconds since the request arrived; undefined when the clock was not started. */
export function msSinceArrival(req: IncomingMessage, now = performance.now()): number | undefined {
  const arrived = (req as Clocked)[ARRIVED];
  return arrived === undefined ? undefined : now - arrived;
}
