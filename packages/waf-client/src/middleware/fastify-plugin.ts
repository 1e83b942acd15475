/**
 * The Fastify plugin: an `onRequest` hook applying the same verdict as the Connect middleware.
 *
 * Typed structurally (the few members of a Fastify instance, request and reply it uses) so the
 * package does not require `fastify` at run time or for type checking; the tests check that
 * `fastify.register(rampart.fastifyPlugin)` type-checks against real Fastify types. It carries
 * `Symbol.for('skip-override')` (what `fastify-plugin` sets), so its hook applies to the whole
 * app rather than to an encapsulated child context.
 *
 * The request info is on `request.rampart` (a request decorator) and on `request.raw.rampart`.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Verdict } from './request-handler.js';
import type { RampartRequestInfo } from './request-info.js';
import { verdictDispatcher } from './verdict-batch.js';

export interface FastifyLikeRequest {
  readonly raw: IncomingMessage;
}

export interface FastifyLikeReply {
  code(statusCode: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(payload?: string): FastifyLikeReply;
}

export interface FastifyLikeInstance {
  addHook(
    name: 'onRequest',
    hook: (
      request: FastifyLikeRequest,
      reply: FastifyLikeReply,
      done: (err?: Error) => void,
    ) => void,
  ): unknown;
  decorateRequest(name: 'rampart', value: null): unknown;
  hasRequestDecorator(name: string): boolean;
}

export interface RampartFastifyPlugin {
  (instance: FastifyLikeInstance, options: unknown, done: (err?: Error) => void): void;
  [key: symbol]: unknown;
}

interface HookContinuation {
  readonly request: FastifyLikeRequest;
  readonly reply: FastifyLikeReply;
  readonly done: (err?: Error) => void;
}

export function createFastifyPlugin(
  handler: RequestHandler,
  batched: boolean,
): RampartFastifyPlugin {
  const apply = (
    raw: IncomingMessage,
    { request, reply, done }: HookContinuation,
    verdict: Verdict,
  ): void => {
    raw.rampart = verdict.info;
    (request as FastifyLikeRequest & { rampart: RampartRequestInfo }).rampart = verdict.info;
    const refusal = verdict.refusal;
    try {
      if (refusal) {
        reply.code(refusal.status);
        for (const name in refusal.headers) reply.header(name, refusal.headers[name] as string);
        reply.send(refusal.body); // answering from onRequest: the route handler is skipped
        return;
      }
      if (verdict.passHeaders) {
        for (const name in verdict.passHeaders)
          reply.header(name, verdict.passHeaders[name] as string);
      }
    } catch (error) {
      handler.adapterFailed(error);
      if (refusal) return; // send() may have started the answer: do not run the route too
    }
    done();
  };
  const dispatch = verdictDispatcher(handler, apply, batched);

  function rampart(
    instance: FastifyLikeInstance,
    _options: unknown,
    done: (err?: Error) => void,
  ): void {
    // Registered already (in this context or an ancestor, whose decorators are inherited): a
    // second hook would evaluate, count rate limits and report every request twice.
    if (instance.hasRequestDecorator('rampart')) {
      done();
      return;
    }
    instance.decorateRequest('rampart', null);
    instance.addHook('onRequest', (request, reply, hookDone) => {
      dispatch(request.raw, { request, reply, done: hookDone });
    });
    done();
  }
  const marks: Record<symbol, unknown> = {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'rampart',
  };
  return Object.assign(rampart, marks);
}
