/**
 * Strict option parsing for the CLI against a command's `CommandSpec`: unknown options, stray
 * arguments, missing arguments and missing required options are usage errors, and `--help` /
 * `-h` is answered here for every command.
 */
import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';
import { type CommandSpec, formatCommandUsage, type OptionSpec, optionTable } from './usage.js';

/**
 * Thrown by `parseOptions` when the command line asks for help: `main` prints `usage` on
 * stdout and exits 0, so no command runs with `--help` among its options.
 */
export class HelpRequested extends Error {
  constructor(readonly usage: string) {
    super('help requested');
    this.name = 'HelpRequested';
  }
}

type OptionValue<O extends OptionSpec> = O extends { type: 'boolean' }
  ? boolean
  : O extends { multiple: true }
    ? string[]
    : string;

/** Parsed option values: always there when required or defaulted, else possibly undefined. */
export type OptionValues<T extends CommandSpec['options']> = {
  readonly [K in keyof T]: T[K] extends { required: true } | { default: string }
    ? OptionValue<T[K]>
    : OptionValue<T[K]> | undefined;
};

/** Positional arguments by the names the spec gives them. */
export type ArgumentValues<S extends CommandSpec> = S['arguments'] extends readonly {
  name: infer N extends string;
}[]
  ? { readonly [K in N]: string }
  : Readonly<Record<never, string>>;

/**
 * Parses `argv` (the words after the command's name) against `spec` with `node:util`
 * `parseArgs`, strictly. Throws `HelpRequested` when `--help` or `-h` is given (before any
 * other check but the parse itself, so `rampart evaluate --help` needs no `--snapshot`), and a
 * usage error (exit 64) naming the problem otherwise.
 */
export function parseOptions<const S extends CommandSpec>(
  argv: readonly string[],
  spec: S,
): { values: OptionValues<S['options']>; args: ArgumentValues<S> } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: optionTable(spec),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    if (error instanceof Error && 'code' in error)
      throw usageError(`${error.message} (see "rampart ${spec.name} --help")`);
    throw error;
  }
  const { values, positionals } = parsed;
  if (values.help === true) throw new HelpRequested(formatCommandUsage(spec));
  const expected = spec.arguments ?? [];
  if (positionals.length > expected.length)
    throw usageError(`unexpected argument "${positionals[expected.length]}"`);
  const missing = expected[positionals.length];
  if (missing !== undefined) throw usageError(`${spec.name} needs ${missing.name}`);
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required && (values[name] === undefined || values[name] === ''))
      throw usageError(`--${name} is required`);
  }
  const args = Object.fromEntries(expected.map((a, i) => [a.name, positionals[i]]));
  return {
    values: values as OptionValues<S['options']>,
    args: args as ArgumentValues<S>,
  };
}
