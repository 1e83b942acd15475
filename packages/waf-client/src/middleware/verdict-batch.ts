/**
 * Batched evaluation (`evaluation: 'batched'`, the default): under load, the requests that reach
 * the WAF during one turn of the event loop are evaluated together at the end of that turn, then
 * continue in the order they arrived; a lone request is evaluated at once. When a request waits
 * and why is {@link TurnBatch}'s contract; this file adds what a batch does with requests.
 *
 * Every evaluation of the batch runs first, while the evaluator's code and tables are in the CPU
 * caches, then every request continues (the app's code after the middleware then also runs for
 * the whole batch in a row). Evaluated inline, between the HTTP parser and the app's router,
 * each evaluation fetches them back from memory, which is most of what the WAF costs a busy
 * server (see the client-demo README's `bench:middleware`).
 *
 * Rate limits count requests in arrival order, exactly as inline. An exception thrown while
 * applying one waiting request's verdict (the app's own `next()` code under plain node:http)
 * does not strand the rest of the batch: the others are applied first, then the first exception
 * is rethrown, and reaches the process as it would have from the app's request listener.
 *
 * A waiting request is evaluated and continued inside the OpenTelemetry context it arrived in,
 * not the context of the end-of-turn callback (which is that of the turn's first request): its
 * WAF span and the app's spans after the middleware join its own trace. Capturing and
 * restoring that context costs 30-60 ns; `AsyncLocalStorage.snapshot()`, which would carry
 * every async-local store, cost about 3 us a request on Node 24 (more than the evaluation), so
 * other stores an app keeps in `AsyncLocalStorage` are seen as at the end of the turn: an app
 * that needs them after the middleware uses `evaluation: 'inline'`.
 */
import type { IncomingMessage } from 'node:http';
import { type Context, context as otelContext } from '@opentelemetry/api';
import type { RequestHandler, Verdict } from './request-handler.js';
import { TurnBatch } from './turn-batch.js';

/** How an adapter finishes one request once its verdict is known (`context`: its own state). */
export type ApplyVerdict<C> = (req: IncomingMessage, context: C, verdict: Verdict) => void;

interface Waiting<C> {
  readonly req: IncomingMessage;
  readonly context: C;
  /** The OpenTelemetry context the request arrived in. */
  readonly arrivedIn: Context;
}

/**
 * What an adapter calls per request: evaluates it and hands it to `apply` with its verdict,
 * batched as described above, or at once for every request when `batched` is false (inline
 * evaluation, and mode off).
 */
export function verdictDispatcher<C>(
  handler: RequestHandler,
  apply: ApplyVerdict<C>,
  batched: boolean,
): (req: IncomingMessage, context: C) => void {
  // handle() never throws (failures become the fail-mode verdict)
  if (!batched) return (req, context) => apply(req, context, handler.handle(req));
  const batch = new TurnBatch<Waiting<C>>(
    ({ req, context }) => apply(req, context, handler.handle(req)),
    (waiting) => {
      const verdicts = waiting.map(({ req, arrivedIn }) =>
        otelContext.with(arrivedIn, () => handler.handle(req)),
      );
      let failure: { error: unknown } | null = null;
      for (let i = 0; i < waiting.length; i++) {
        const { req, context, arrivedIn } = waiting[i] as Waiting<C>;
        try {
          otelContext.with(arrivedIn, () => apply(req, context, verdicts[i] as Verdict));
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    },
  );
  return (req, context) => batch.add({ req, context, arrivedIn: otelContext.active() });
}
