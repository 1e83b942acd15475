/**
 * The OpenTelemetry SDK's own messages (an export that failed, spans dropped because the queue
 * was full) as lines of the app's structured log, each kind at most once per interval, with
 * the number held back: a collector that is down must not flood the log any more than it may
 * slow the app.
 */
import type { DiagLogger } from '@opentelemetry/api';
import type { Logger } from '../logging/logger.js';

export const DIAG_INTERVAL_MS = 60_000;

export class ThrottledDiagLogger implements DiagLogger {
  private readonly last = new Map<string, { at: number; heldBack: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = DIAG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  error(message: string, ...args: unknown[]): void {
    this.write('error', message, args);
  }

  warn(message: string, ...args: unknown[]): void {
    this.write('warn', message, args);
  }

  info(message: string, ...args: unknown[]): void {
    this.write('info', message, args);
  }

  debug(message: string, ...args: unknown[]): void {
    this.write('debug', message, args);
  }

  verbose(message: string, ...args: unknown[]): void {
    this.write('trace', message, args);
  }

  private write(
    level: 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    args: unknown[],
  ): void {
    // Typed as a string, but some SDK components pass the error itself.
    const text = typeof message === 'string' ? message : describe(message);
    // Messages that differ only in their numbers ("Dropped 12 spans") are one kind.
    const kind = `${level}:${text.replace(/\d+/g, '#')}`;
    const now = this.now();
    const seen = this.last.get(kind);
    if (seen !== undefined && now - seen.at < this.intervalMs) {
      seen.heldBack++;
      return;
    }
    const heldBack = seen?.heldBack ?? 0;
    this.last.set(kind, { at: now, heldBack: 0 });
    const detail = args.map(describe).filter((text) => text !== '');
    this.logger[level](
      {
        component: 'opentelemetry',
        ...(detail.length > 0 ? { detail: detail.join('; ') } : {}),
        ...(heldBack > 0 ? { heldBack } : {}),
      },
      text,
    );
  }
}

function describe(arg: unknown): string {
  if (arg instanceof Error) return arg.message;
  if (typeof arg === 'string') return arg;
  if (arg === undefined || arg === null) return '';
  try {
    return JSON.stringify(arg);
  } catch {
    return String(arg);
  }
}
