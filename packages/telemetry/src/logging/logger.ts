/**
 * Rampart's structured logs: one JSON object per line on standard output (pino), every line
 * carrying the `trace_id` and `span_id` of the span active where it was written, so a log line
 * leads to its trace in Jaeger, and the process's `service` name, so lines of several apps can
 * share a file.
 *
 * Secrets never reach the output: the fields that carry them in Rampart (authorization
 * headers, cookies, site keys, admin and session tokens, passwords) are replaced by
 * `[redacted]` wherever they appear in a logged object, and {@link scrubSecret} lets a caller
 * remove a known secret from free text before it is logged.
 */
import { context, trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { runningTelemetry } from '../sdk/lifecycle.js';

export type { Logger } from 'pino';

/** Object keys whose values are never written (any depth, any case of these spellings). */
export const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'password',
  'siteKey',
  'site_key',
  'adminToken',
  'token',
  'secret',
  'sessionSecret',
  'x-rampart-site-key',
] as const;

export const REDACTED = '[redacted]';

export interface LoggerSettings {
  /** `service` on every line: the app's service name. */
  readonly service: string;
  /** Default `info`; `LOG_LEVEL` is the usual source. */
  readonly level?: string;
  /** Default standard output; tests pass a stream of their own. */
  readonly destination?: DestinationStream;
}

/**
 * A JSON logger. Child loggers (`logger.child({ component: 'sync' })`) keep the trace fields.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: settings.service },
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: SECRET_KEYS.flatMap((key) => [quoted(key), `*.${quoted(key)}`, `*.*.${quoted(key)}`]),
      censor: REDACTED,
    },
    mixin: traceFields,
  };
  return settings.destination === undefined ? pino(options) : pino(options, settings.destination);
}

/** The ids of the span active now, as log fields (none outside a span). */
export function traceFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return {};
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}` };
}

/** `text` with every occurrence of `secret` replaced (a no-op for an empty secret). */
export function scrubSecret(text: string, secret: string | undefined): string {
  return secret === undefined || secret === '' ? text : text.split(secret).join(REDACTED);
}

/** A redaction path segment: keys with `-` need bracket quoting in pino's path syntax. */
function quoted(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
}

/**
 * The logger of an app process: named after the running telemetry's service (`OTEL_SERVICE_NAME`
 * or the app's package), else `fallbackService`; level from `LOG_LEVEL` (default `info`).
 */
export function appLogger(fallbackService: string): Logger {
  return createLogger({
    service: runningTelemetry()?.settings.serviceName ?? fallbackService,
    level: process.env.LOG_LEVEL,
  });
}
