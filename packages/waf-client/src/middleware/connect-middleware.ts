/**
 * The `(req, res, next)` middleware for Express, Connect and plain node:http.
 *
 * The verdict is computed inside a guard; `next()` is called outside it, so an exception thrown
 * by the app's own handlers propagates exactly as it would without the WAF (Express turns it
 * into its error handler, not into a WAF fail-mode response). With batched evaluation (the
 * default, see `verdict-batch.ts`), under load, `next()` runs at the end of the event-loop turn
 * the request arrived in; otherwise before the middleware returns.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Refusal } from '../responses/responses.js';
import type { RequestHandler, Verdict } from './request-handler.js';
import { verdictDispatcher } from './verdict-batch.js';

type Next = (err?: unknown) => void;

export type ConnectMiddleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

interface Continuation {
  readonly res: ServerResponse;
  readonly next: Next;
}

export function createConnectMiddleware(
  handler: RequestHandler,
  batched: boolean,
): ConnectMiddleware {
  const apply = (req: IncomingMessage, { res, next }: Continuation, verdict: Verdict): void => {
    req.rampart = verdict.info;
    try {
      if (verdict.refusal) {
        sendRefusal(req, res, verdict.refusal);
        return;
      }
      if (verdict.passHeaders && !res.headersSent) {
        for (const name in verdict.passHeaders)
          res.setHeader(name, verdict.passHeaders[name] as string);
      }
    } catch (error) {
      handler.adapterFailed(error);
      if (res.headersSent) return; // a refusal was (partly) written: the app must not answer too
    }
    next();
  };
  const dispatch = verdictDispatcher(handler, apply, batched);
  return function rampartMiddleware(req, res, next) {
    dispatch(req, { res, next });
  };
}

/** Writes a refusal (no body for HEAD); a response already under way is just ended. */
export function sendRefusal(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = Buffer.from(refusal.body, 'utf8');
  res.writeHead(refusal.status, { ...refusal.headers, 'content-length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
}
