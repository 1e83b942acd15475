/**
 * The `rampart` command: build and inspect snapshots, evaluate a request against one, run the
 * substitution engine.
 *
 * `main` returns the exit code instead of exiting, so tests run it in-process. It finds the
 * command named by the first words of the command line and runs it; each command declares its
 * options and help in one `CommandSpec`, and `--help` is answered for all of them here.
 */
import { CliError, type CliIo, EXIT, usageError } from './cli-error.js';
import { EVALUATE, evaluateCommand } from './evaluate-command.js';
import { HelpRequested } from './parse-options.js';
import { SNAPSHOT_BUILD, snapshotBuildCommand } from './snapshot-build-command.js';
import { SNAPSHOT_INSPECT, snapshotInspectCommand } from './snapshot-inspect-command.js';
import { SUBSTITUTE, substituteCommand } from './substitute-command.js';
import { type CommandSpec, formatExitCodes, formatGroupUsage, HELP_OPTION } from './usage.js';

interface Command {
  readonly spec: CommandSpec;
  run(argv: readonly string[], io: CliIo): Promise<void>;
}

const COMMANDS: readonly Command[] = [
  { spec: SNAPSHOT_BUILD, run: snapshotBuildCommand },
  { spec: SNAPSHOT_INSPECT, run: snapshotInspectCommand },
  { spec: EVALUATE, run: evaluateCommand },
  { spec: SUBSTITUTE, run: (argv, io) => substituteCommand(argv, io) },
];

/** Names that lead to commands without being one: `rampart` itself and `rampart snapshot`. */
const GROUPS = [
  {
    name: '',
    summary: 'build and inspect rule snapshots, evaluate requests against them, run substitutions',
  },
  {
    name: 'snapshot',
    summary: 'build and inspect snapshot files, the SQLite databases that WAF clients load',
  },
] as const;

type Group = (typeof GROUPS)[number];

const wordsOf = (name: string) => (name === '' ? [] : name.split(' '));

const startsWith = (argv: readonly string[], words: readonly string[]) =>
  words.every((word, i) => argv[i] === word);

const commandsIn = (group: Group) =>
  COMMANDS.map((c) => c.spec).filter((spec) => startsWith(wordsOf(spec.name), wordsOf(group.name)));

/** The help of a group; `rampart --help` adds the exit codes. */
function groupUsage(group: Group): string {
  return formatGroupUsage(group, commandsIn(group), group.name === '' ? [formatExitCodes()] : []);
}

/** The spellings of the option every command has (`--help`, `-h`), and `help` as a command. */
const HELP_WORDS: readonly string[] = [
  'help',
  ...Object.entries(HELP_OPTION).flatMap(([name, option]) => [`--${name}`, `-${option.short}`]),
];

/**
 * Runs the command line `argv` (without `node` and the script), writing to `io`; resolves to
 * the exit code (`EXIT`). A group without a command (`rampart`, `rampart snapshot`) prints its
 * usage and exits 64; with `--help`, `-h` or `help` it exits 0; `rampart help COMMAND...` is
 * `rampart COMMAND... --help`.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = COMMANDS.find((c) => startsWith(argv, wordsOf(c.spec.name)));
    if (command !== undefined) {
      await command.run(argv.slice(wordsOf(command.spec.name).length), io);
      return EXIT.ok;
    }
    const group = [...GROUPS].reverse().find((g) => startsWith(argv, wordsOf(g.name))) ?? GROUPS[0];
    const depth = wordsOf(group.name).length;
    const next = argv[depth];
    if (next === 'help' && argv.length > depth + 1)
      return await main([...argv.slice(0, depth), ...argv.slice(depth + 1), '--help'], io);
    if (next === undefined || HELP_WORDS.includes(next)) {
      io.stdout.write(groupUsage(group));
      return next === undefined ? EXIT.usage : EXIT.ok;
    }
    const helpOfGroup = ['rampart', ...wordsOf(group.name), '--help'].join(' ');
    throw usageError(
      `unknown command "${argv.slice(0, depth + 1).join(' ')}" (try "${helpOfGroup}")`,
    );
  } catch (error) {
    if (error instanceof HelpRequested) {
      io.stdout.write(error.usage);
      return EXIT.ok;
    }
    if (error instanceof CliError) {
      io.stderr.write(`rampart: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`rampart: ${(error as Error).message ?? String(error)}\n`);
    return EXIT.failure;
  }
}
