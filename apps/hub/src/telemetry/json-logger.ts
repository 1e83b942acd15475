/**
 * Nest's logger writing Rampart's structured log (`@rampart/telemetry/logging/logger`): one JSON
 * object per line with `trace_id` and `span_id` of the active span, the Nest context as
 * `context`, levels mapped (`log` -> `info`, `verbose` -> `trace`). Installed with
 * `app.useLogger()`, so every `new Logger(...)` and the framework's own messages write here.
 */
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { Logger } from '@rampart/telemetry/logging/logger';

const PINO_LEVEL: Record<LogLevel, string> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

export class JsonLogger implements LoggerService {
  constructor(
    private readonly pino: Logger,
    level: LogLevel,
  ) {
    pino.level = PINO_LEVEL[level];
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const [stack, context] = rest.length >= 2 ? rest : [undefined, rest[0]];
    this.write('error', message, context === undefined ? [] : [context], stack);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  setLogLevels(levels: LogLevel[]): void {
    const order: LogLevel[] = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'];
    const lowest = order.find((level) => levels.includes(level)) ?? 'log';
    this.pino.level = PINO_LEVEL[lowest];
  }

  private write(level: string, message: unknown, rest: unknown[], stack?: unknown): void {
    const context = rest.length > 0 && typeof rest.at(-1) === 'string' ? rest.at(-1) : undefined;
    const fields: Record<string, unknown> = {};
    if (context !== undefined) fields.context = context;
    if (typeof stack === 'string' && stack !== '') fields.stack = stack;
    const log = this.pino[level as 'info'].bind(this.pino);
    if (message instanceof Error) log({ ...fields, err: message }, message.message);
    else if (typeof message === 'string') log(fields, message);
    else log({ ...fields, value: message }, 'value');
  }
}
