/**
 * The benchmark's reference for the WAF's batched evaluation (DEMO_BENCH_DEFER_REQUESTS): at the
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
