import { describe, expect, expectTypeOf, it } from 'vitest';
import { CliError, EXIT } from './cli-error.js';
import { HelpRequested, parseOptions } from './parse-options.js';
import { type CommandSpec, formatCommandUsage } from './usage.js';

const DEMO = {
  name: 'demo run',
  summary: 'run a demonstration',
  arguments: [{ name: 'FILE', description: 'the input' }],
  options: {
    out: { type: 'string', value: 'FILE', required: true, description: 'where to write' },
    level: { type: 'string', value: 'N', default: '3', description: 'how hard to try' },
    tag: { type: 'string', value: 'T', multiple: true, description: 'a label' },
    dry: { type: 'boolean', description: 'change nothing' },
  },
  examples: ['rampart demo run --out result.txt input.txt'],
} as const satisfies CommandSpec;

/** The CliError `run` throws, or a failure when it throws nothing or something else. */
function cliErrorOf(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}

describe('parseOptions', () => {
  it('returns the options by name, defaults applied, and the arguments by their names', () => {
    const { values, args } = parseOptions(
      ['--out', 'o.txt', '--tag', 'a', 'in.txt', '--tag', 'b', '--dry'],
      DEMO,
    );
    expect(values).toEqual({ out: 'o.txt', level: '3', tag: ['a', 'b'], dry: true });
    expect(args).toEqual({ FILE: 'in.txt' });
  });

  it('types required and defaulted options as present, the others as possibly absent', () => {
    const { values, args } = parseOptions(['--out', 'o', 'in'], DEMO);
    expectTypeOf(values.out).toEqualTypeOf<string>();
    expectTypeOf(values.level).toEqualTypeOf<string>();
    expectTypeOf(values.tag).toEqualTypeOf<string[] | undefined>();
    expectTypeOf(values.dry).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(args.FILE).toEqualTypeOf<string>();
  });

  it('answers --help and -h with the usage of the command, before any other check', () => {
    for (const argv of [['--help'], ['-h'], ['in.txt', '--tag', 'x', '-h']]) {
      let thrown: unknown;
      try {
        parseOptions(argv, DEMO);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HelpRequested);
      expect((thrown as HelpRequested).usage).toBe(formatCommandUsage(DEMO));
    }
  });

  it('makes an unknown option a usage error that points to the help', () => {
    const error = cliErrorOf(() => parseOptions(['--out', 'o', 'in', '--colour', 'red'], DEMO));
    expect(error.exitCode).toBe(EXIT.usage);
    expect(error.message).toContain("Unknown option '--colour'");
    expect(error.message).toContain('(see "rampart demo run --help")');
  });

  it('makes a missing or empty required option a usage error naming it', () => {
    expect(cliErrorOf(() => parseOptions(['in'], DEMO)).message).toBe('--out is required');
    expect(cliErrorOf(() => parseOptions(['--out', '', 'in'], DEMO)).message).toBe(
      '--out is required',
    );
  });

  it('makes a missing or an extra argument a usage error', () => {
    expect(cliErrorOf(() => parseOptions(['--out', 'o'], DEMO)).message).toBe(
      'demo run needs FILE',
    );
    expect(cliErrorOf(() => parseOptions(['--out', 'o', 'a', 'b'], DEMO)).message).toBe(
      'unexpected argument "b"',
    );
  });

  it('makes a value given to a flag a usage error', () => {
    const error = cliErrorOf(() => parseOptions(['--out', 'o', 'in', '--dry=yes'], DEMO));
    expect(error.exitCode).toBe(EXIT.usage);
    expect(error.message).toContain('--dry');
  });
});
