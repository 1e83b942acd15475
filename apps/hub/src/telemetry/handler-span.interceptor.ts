/**
 * A span per handled HTTP request, named after the controller method that handled it
 * (`SitesController.create`), with the handler's time on the request for `Server-Timing`.
 *
 * Why here: the OpenTelemetry NestJS instrumentation (which makes the same span) supports
 * NestJS below 12, and the hub runs 12. The HTTP and Express instrumentations still make the
 * server span (`POST /v1/sites/:siteId/rules`) this span sits under.
 *
 * The handler runs inside the span's context (the subscription that calls it is made within
 * `context.with`), so database, Redis and queue spans of the handler are its children.
 */
import { performance } from 'node:perf_hooks';
import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { context, trace } from '@opentelemetry/api';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { HUB_TRACER, recordFailure } from './job-trace.js';

const HANDLER_MS = Symbol('handlerMs');

/** The handler's time of `req` (ms), once it finished; undefined before or without one. */
export function handlerMsOf(req: object): number | undefined {
  return (req as { [HANDLER_MS]?: number })[HANDLER_MS];
}

const tracer = trace.getTracer(HUB_TRACER);

@Injectable()
export class HandlerSpanInterceptor implements NestInterceptor {
  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'http') return next.handle();
    const name = `${execution.getClass().name}.${execution.getHandler().name}`;
    const req = execution.switchToHttp().getRequest<Request>();
    return new Observable((subscriber) => {
      const started = performance.now();
      const span = tracer.startSpan(name, {
        attributes: { 'code.function.name': name, 'http.request.method': req.method },
      });
      const done = (error?: unknown) => {
        (req as { [HANDLER_MS]?: number })[HANDLER_MS] = performance.now() - started;
        const route = (req.route as { path?: string } | undefined)?.path;
        if (route !== undefined) span.setAttribute('http.route', route);
        // A refusal the API meant (a 4xx) is not a failure of the hub: its span stays unset.
        const refusal = error instanceof HttpException && error.getStatus() < 500;
        if (error !== undefined && !refusal) recordFailure(span, error);
        span.end();
      };
      return context.with(trace.setSpan(context.active(), span), () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            done(error);
            subscriber.error(error);
          },
          complete: () => {
            done();
            subscriber.complete();
          },
        }),
      );
    });
  }
}
