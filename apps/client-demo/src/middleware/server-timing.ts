/**
 * The `Server-Timing` header: where the time of a request went, readable in any browser's
 * developer tools and by load tests.
 *
 *     Server-Timing: waf;dur=0.012;desc="pass/enforce", ip;dur=0.002, app;dur=1.734, total;dur=1.801
 *
 * - `waf`: the WAF's evaluation and its decision as `<action>/<mode>`, where the mode is
 *   `enforce` only when both the client and the deciding rule enforce (`block/monitor` means
 *   "would have blocked, let through"). Without `dur`: `desc="off"` (WAF off),
 *   `desc="unevaluated/<mode>"` (no snapshot yet or a WAF failure: the fail mode applied),
 *   `desc="none"` (no WAF in this process). The deciding rule is deliberately not named: that
 *   would tell an attacker which rule to work around.
 * - `ip`: resolving the client address (trusted proxies).
 * - `app`: from the end of the WAF middleware to the headers (the route's handler).
 * - `total`: from the first middleware to the headers. With the WAF's batched evaluation (its
 *   default) this includes the wait for the end of the event-loop turn the request arrived in:
 *   `total` minus `waf`, `ip` and `app` is that wait plus the other requests of the batch.
 */
import { performance } from 'node:perf_hooks';
import { msSinceArrival } from '@rampart/telemetry/http/request-clock';
import { ms } from '@rampart/telemetry/http/server-timing';
import type { NextFunction, Request, Response } from 'express';

const HANDLER_STARTED = Symbol('handlerStarted');

interface Timed {
  [HANDLER_STARTED]?: number;
}

/** Mounted right after the WAF: notes when the application's own work began. */
export function markHandlerStart(req: Request, _res: Response, next: NextFunction): void {
  (req as Timed)[HANDLER_STARTED] = performance.now();
  next();
}

/** The WAF outcome the header describes (what `@rampart/waf-client` leaves on `req.rampart`). */
export interface WafOutcome {
  readonly decision: { readonly action: string; readonly mode: string } | null;
  readonly mode: string;
  readonly timings: { readonly resolveIpMs: number; readonly evaluateMs: number };
}

/** Reads the outcome of the request, if the WAF ran. */
export type WafOutcomeOf = (req: Request) => WafOutcome | undefined;

/** A before-headers hook (`@rampart/telemetry/http/before-headers`) that writes the header. */
export function serverTimingHook(wafOutcome: WafOutcomeOf) {
  return (req: Request, res: Response): void => {
    const now = performance.now();
    const timed = req as Timed;
    let header: string;
    const waf = wafOutcome(req);
    if (waf === undefined) header = 'waf;desc="none"';
    else if (waf.mode === 'off') header = 'waf;desc="off"';
    else if (waf.decision === null) header = `waf;desc="unevaluated/${waf.mode}"`;
    else {
      // A decision is enforced only when the client and the deciding rule are both in enforce.
      const mode =
        waf.mode === 'enforce' && waf.decision.mode === 'enforce' ? 'enforce' : 'monitor';
      header = `waf;dur=${ms(waf.timings.evaluateMs)};desc="${waf.decision.action}/${mode}", ip;dur=${ms(waf.timings.resolveIpMs)}`;
    }
    const handlerStarted = timed[HANDLER_STARTED];
    if (handlerStarted !== undefined) header += `, app;dur=${ms(now - handlerStarted)}`;
    const total = msSinceArrival(req, now);
    if (total !== undefined) header += `, total;dur=${ms(total)}`;
    res.setHeader('Server-Timing', header);
  };
}
