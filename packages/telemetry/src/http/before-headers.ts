/**
 * "Just before the headers go out" hooks, installed once on an Express app's response
 * prototype: how the demo and the hub put `Server-Timing` on every answer.
 *
 * Every way Express (or the WAF, or Nest) answers ends in `writeHead`, explicitly or through
 * Node's implicit header write on the first `write`/`end`, so overriding it on `app.response`
 * catches all of them: pages, redirects, errors and the WAF's own block answers. Being on the
 * prototype, it costs no closure per request, unlike wrapping `res.writeHead` in a middleware.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A response as Express's prototype has it: it knows its request. */
export interface HookedResponse extends ServerResponse {
  readonly req: IncomingMessage;
}

export type BeforeHeadersHook<Req extends IncomingMessage, Res extends HookedResponse> = (
  req: Req,
  res: Res,
) => void;

/** Installs `hooks` on `app.response` (Express's response prototype). */
export function installBeforeHeaders<Req extends IncomingMessage, Res extends HookedResponse>(
  app: { readonly response: object },
  hooks: readonly BeforeHeadersHook<Req, Res>[],
): void {
  const proto = app.response as ServerResponse;
  const original = proto.writeHead;
  function writeHead(
    this: Res,
    ...args: Parameters<ServerResponse['writeHead']>
  ): ReturnType<ServerResponse['writeHead']> {
    if (!this.headersSent) {
      for (const hook of hooks) hook(this.req as Req, this);
    }
    return original.apply(this, args);
  }
  Object.defineProperty(proto, 'writeHead', {
    value: writeHead,
    writable: true,
    configurable: true,
  });
}
