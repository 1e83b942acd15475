/**
 * The `rampart` command: build and inspect snapshots, evaluate a request against one.
 *
 * `main` returns the exit code instead of exiting, so tests run it in-process.
 */
import { CliError, type CliIo, EXIT, usageError } from './cli-error.js';
import { evaluateCommand } from './evaluate-command.js';
import { snapshotBuildCommand } from './snapshot-build-command.js';
import { snapshotInspectCommand } from './snapshot-inspect-command.js';
import { substituteCommand } from './substitute-command.js';

export const USAGE = `usage:
  rampart snapshot build --rules RULES.json [--country CSV]... [--asn CSV]... [--reputation LIST]...
                         [--version N] [--skip-bad-lines] --out FILE
  rampart snapshot inspect FILE
  rampart evaluate --snapshot FILE --ip IP [--method M] [--host H] [--path P] [--query Q]
                   [--ua UA] [--header name=value]...
  rampart substitute --rules RULES.json [--match-kind leftmost-first|leftmost-longest]
                     [--max-buffered N] [--chunk-size N] < body > result
`;

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (command === 'snapshot' && rest[0] === 'build')
      await snapshotBuildCommand(rest.slice(1), io);
    else if (command === 'snapshot' && rest[0] === 'inspect')
      await snapshotInspectCommand(rest.slice(1), io);
    else if (command === 'evaluate') await evaluateCommand(rest, io);
    else if (command === 'substitute') await substituteCommand(rest, io);
    else if (command === undefined || command === '--help' || command === 'help') {
      io.stdout.write(USAGE);
      return command === undefined ? EXIT.usage : EXIT.ok;
    } else throw usageError(`unknown command "${argv.slice(0, 2).join(' ')}" (try "rampart help")`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`rampart: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`rampart: ${(error as Error).message ?? String(error)}\n`);
    return EXIT.failure;
  }
}
