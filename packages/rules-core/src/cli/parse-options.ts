/**
 * Strict option parsing for the CLI: unknown options and stray arguments are usage errors.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { usageError } from './cli-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseOptions<T extends Options>(
  argv: readonly string[],
  options: T,
  positionals = 0,
) {
  try {
    const parsed = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: positionals > 0,
    });
    if (parsed.positionals.length > positionals) {
      throw usageError(`unexpected argument "${parsed.positionals[positionals]}"`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof Error && 'code' in error) throw usageError(error.message);
    throw error;
  }
}

/** The value of a required option, or a usage error naming it. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw usageError(`--${name} is required`);
  return value;
}
