/**
 * The benchmark's reference for the WAF's batched evaluation (BENCH_APP_STAGE=deferred): at the
 * WAF's place in the stack, requests are held to the end of their event-loop turn exactly when
 * the WAF would hold them (the client's own `TurnBatch`), then continue in arrival order, with
 * nothing evaluated. Measured next to `RAMPART_MODE=off` (nothing held) and `enforce`, it
 * separates what holding requests does to the app's own code from what evaluating costs (see
 * the README's benchmark section).
 */
import { TurnBatch } from '@rampart/waf-client/middleware/turn-batch';
import type { NextFunction, Request, Response } from 'express';

export function deferToTurnEnd(): (req: Request, res: Response, next: NextFunction) => void {
  const batch = new TurnBatch<NextFunction>(
    (next) => next(),
    (waiting) => {
      for (const next of waiting) next();
    },
  );
  return (_req, _res, next) => batch.add(next);
}

/** The request header that picks {@link WafSwitch}'s path for one request: `waf` or `deferred`. */
export const WAF_VARIANT_HEADER = 'x-bench-waf';

/**
 * The benchmark's in-process comparison (BENCH_APP_STAGE=switch): the WAF's middleware, or in
 * its place {@link deferToTurnEnd}, switched at run time (`/__bench/waf-switch`), or per request
 * by the `X-Bench-Waf: waf|deferred` header (the interleaved latency measurement). Both run in
 * one process, so the comparison escapes the per-process fast and slow modes of this machine.
 */
export class WafSwitch {
  /** True: requests go through the WAF; false: they are only held as the WAF would hold them. */
  useWaf = true;
  private readonly deferred = deferToTurnEnd();
  private readonly waf: (req: Request, res: Response, next: NextFunction) => void;

  constructor(waf: (req: Request, res: Response, next: NextFunction) => void) {
    this.waf = waf;
  }

  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const chosen = req.headers[WAF_VARIANT_HEADER];
    if (chosen === undefined ? this.useWaf : chosen === 'waf') this.waf(req, res, next);
    else this.deferred(req, res, next);
  };
}
