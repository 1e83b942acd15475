/**
 * Errors the `rampart` command reports as one line and an exit code.
 *
 * Exit codes follow sysexits(3) so scripts can tell a typo from bad data: 64 for wrong usage,
 * 65 for input data that does not validate, 66 for an input file that cannot be read, 78 for a
 * Node.js too old to run the command at all (see `node-version.ts`; the bin checks it before it
 * loads anything else).
 */
import { MINIMUM_NODE_TEXT, UNSUPPORTED_NODE_EXIT } from './node-version.js';

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 64,
  data: 65,
  noInput: 66,
  unsupportedNode: UNSUPPORTED_NODE_EXIT,
} as const;

/**
 * What each exit code means, as `rampart --help` lists it. Typed by `EXIT`'s keys so a new
 * code cannot be added without saying what it means.
 */
export const EXIT_MEANINGS: { readonly [K in keyof typeof EXIT]: string } = {
  ok: 'success',
  failure: 'any other failure',
  usage: 'wrong usage: unknown command or option, missing or bad option value',
  data: 'input data that does not validate (rules, datasets, a snapshot a client would refuse)',
  noInput: 'an input file that cannot be read',
  unsupportedNode: `Node.js older than ${MINIMUM_NODE_TEXT} (nothing was run)`,
};

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);
export const dataError = (message: string) => new CliError(message, EXIT.data);
export const noInputError = (message: string) => new CliError(message, EXIT.noInput);

/** Where commands write; injected so tests can capture output. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}
