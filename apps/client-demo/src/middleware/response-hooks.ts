/**
 * "Just before the headers go out" hooks, installed once on the app's response prototype.
 *
 * Every way Express (or the WAF) answers ends in `writeHead`, explicitly or through Node's
 * implicit header write on the first `write`/`end`, so overriding it on `app.response` catches
 * all of them: pages, redirects, errors and the WAF's own block answers. Being on the prototype,
 * it costs no closure per request, unlike wrapping `res.writeHead` in a middleware.
 */
import type { ServerResponse } from 'node:http';
import type { Express, Request, Response } from 'express';

export type BeforeHeadersHook = (req: Request, res: Response) => void;

export function installBeforeHeaders(app: Express, hooks: readonly BeforeHeadersHook[]): void {
  const proto = app.response as Response;
  const original = proto.writeHead as ServerResponse['writeHead'];
  function writeHead(
    this: Response,
    ...args: Parameters<ServerResponse['writeHead']>
  ): ReturnType<ServerResponse['writeHead']> {
    if (!this.headersSent) {
      for (const hook of hooks) hook(this.req, this);
    }
    return original.apply(this, args);
  }
  Object.defineProperty(proto, 'writeHead', {
    value: writeHead,
    writable: true,
    configurable: true,
  });
}
