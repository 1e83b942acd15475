/**
 * The client's logging: the app's logger (console-like by default) behind a guard.
 *
 * Two promises to operators. First, the site key is never passed to the logger: every message
 * and string argument is scrubbed of it before it leaves this module (defence in depth: no code
 * path puts it there on purpose). Second, a failure that repeats on every request or every poll
 * does not flood the log: {@link GuardedLogger.throttled} writes a kind of message at most once
 * per interval and says how many were suppressed.
 */

/** The subset of `console` the client uses; pino, winston and bunyan loggers fit it. */
export interface RampartLogger {
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

type Level = 'info' | 'warn' | 'error';

const REDACTED = '[site key redacted]';

export class GuardedLogger {
  private readonly once = new Set<string>();
  private readonly throttle = new Map<string, { until: number; suppressed: number }>();

  constructor(
    private readonly target: RampartLogger,
    private readonly secret: string,
    private readonly prefix = '[rampart] ',
  ) {}

  info(message: string): void {
    this.write('info', message);
  }

  warn(message: string): void {
    this.write('warn', message);
  }

  error(message: string): void {
    this.write('error', message);
  }

  /** Logs `message` the first time `key` is seen, never again. */
  onlyOnce(key: string, level: Level, message: string): void {
    if (this.once.has(key)) return;
    this.once.add(key);
    this.write(level, message);
  }

  /** Logs `message` at most once per `intervalMs` for `key`, counting what it held back. */
  throttled(key: string, level: Level, message: string, intervalMs = 60_000): void {
    const now = Date.now();
    const state = this.throttle.get(key);
    if (state && now < state.until) {
      state.suppressed++;
      return;
    }
    const suppressed = state?.suppressed ?? 0;
    this.throttle.set(key, { until: now + intervalMs, suppressed: 0 });
    this.write(level, suppressed > 0 ? `${message} (${suppressed} similar suppressed)` : message);
  }

  private write(level: Level, message: string): void {
    try {
      this.target[level](this.prefix + this.scrub(message));
    } catch {
      // A broken logger must not break the WAF, let alone the app.
    }
  }

  private scrub(text: string): string {
    return this.secret && text.includes(this.secret)
      ? text.split(this.secret).join(REDACTED)
      : text;
  }
}

/** A short description of an error for a log line (message and code, no stack). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = (error as { cause?: unknown }).cause;
    const causeText =
      cause instanceof Error && cause.message !== error.message ? `: ${cause.message}` : '';
    return `${error.message}${typeof code === 'string' ? ` (${code})` : ''}${causeText}`;
  }
  return String(error);
}
