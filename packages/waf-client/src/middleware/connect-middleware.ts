/**
 * The `(req, res, next)` middleware for Express, Connect and plain node:http.
 *
 * The verdict is computed inside a guard; `next()` is called outside it, so an exception thrown
 * by the app's own handlers propagates exactly as it would without the WAF (Express turns it
 * into its error handler, not into a WAF fail-mode response).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Refusal } from '../responses/responses.js';
import type { RequestHandler } from './request-handler.js';

export type ConnectMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (err?: unknown) => void,
) => void;

export function createConnectMiddleware(handler: RequestHandler): ConnectMiddleware {
  return function rampartMiddleware(req, res, next) {
    const verdict = handler.handle(req); // never throws (failures become the fail-mode verdict)
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
