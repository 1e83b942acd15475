import { describe, expect, it } from 'vitest';
import { EXIT } from './cli-error.js';
import {
  type CommandSpec,
  formatCommandUsage,
  formatExitCodes,
  formatGroupUsage,
  formatSynopsis,
  USAGE_WIDTH,
} from './usage.js';

const DEMO = {
  name: 'demo run',
  summary: 'run a demonstration',
  arguments: [{ name: 'FILE', description: 'the input' }],
  options: {
    out: { type: 'string', value: 'OUT', required: true, description: 'where to write' },
    level: { type: 'string', value: 'N', default: '3', description: 'how hard to try' },
    tag: { type: 'string', value: 'T', multiple: true, description: 'a label' },
    dry: { type: 'boolean', description: 'change nothing' },
  },
  tail: '< IN',
  notes: ['Writes nothing when --dry is given.'],
  examples: ['rampart demo run --out result.txt input.txt'],
} as const satisfies CommandSpec;

const LONG = {
  name: 'long',
  summary: 'has many options',
  options: Object.fromEntries(
    Array.from({ length: 12 }, (_, i) => [
      `option-${i}`,
      {
        type: 'string',
        value: 'VALUE',
        description: `option number ${i}, described at a length that has to be wrapped onto a second line`,
      },
    ]),
  ),
  examples: [`rampart long ${'--option-0 a-value-that-is-long '.repeat(5)}`],
} satisfies CommandSpec;

describe('formatSynopsis', () => {
  it('shows required options bare, the others in brackets, repeatable ones with "...", then arguments and tail', () => {
    expect(formatSynopsis(DEMO)).toBe(
      'usage: rampart demo run --out OUT [--level N] [--tag T]... [--dry] FILE < IN',
    );
  });

  it('wraps at the usage width, continuing under the first option', () => {
    const lines = formatSynopsis(LONG).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(USAGE_WIDTH);
    const indent = ' '.repeat('usage: rampart long '.length);
    for (const line of lines.slice(1)) expect(line.startsWith(`${indent}[--option-`)).toBe(true);
  });
});

describe('formatCommandUsage', () => {
  const usage = formatCommandUsage(DEMO);

  it('starts with what the command does, then the synopsis', () => {
    expect(
      usage.startsWith(`rampart demo run: run a demonstration\n\n${formatSynopsis(DEMO)}\n`),
    ).toBe(true);
  });

  it('lists every option with its value, description and remarks, then --help, in columns', () => {
    const options = usage.slice(usage.indexOf('options:\n')).split('\n\n')[0];
    expect(options).toBe(
      [
        'options:',
        '      --out OUT  where to write (required)',
        '      --level N  how hard to try (default: 3)',
        '      --tag T    a label (repeatable)',
        '      --dry      change nothing',
        '  -h, --help     print this help and exit',
      ].join('\n'),
    );
  });

  it('lists the arguments, the notes and the examples', () => {
    expect(usage).toContain('arguments:\n  FILE  the input\n');
    expect(usage).toContain('\n\nWrites nothing when --dry is given.\n');
    expect(usage.endsWith('example:\n  rampart demo run --out result.txt input.txt\n')).toBe(true);
  });

  it('fits the usage width, except examples, which stay whole so they can be copied', () => {
    const text = formatCommandUsage(LONG);
    const [body = '', examples = ''] = text.split('example:\n');
    for (const line of body.split('\n')) expect(line.length).toBeLessThanOrEqual(USAGE_WIDTH);
    expect(examples.trimEnd()).toBe(`  ${LONG.examples[0]}`.trimEnd());
  });
});

describe('formatGroupUsage', () => {
  it('lists the commands of a group with their summaries', () => {
    const usage = formatGroupUsage({ name: 'demo', summary: 'demonstrations' }, [DEMO]);
    expect(usage).toContain('rampart demo: demonstrations\n');
    expect(usage).toContain('usage: rampart demo COMMAND [OPTION]...\n');
    expect(usage).toContain('commands:\n  demo run  run a demonstration\n');
    expect(usage).toContain('"rampart COMMAND --help"');
  });
});

describe('formatExitCodes', () => {
  it('lists every exit code with what it means', () => {
    const lines = formatExitCodes().split('\n');
    expect(lines[0]).toBe('exit codes:');
    expect(lines.slice(1).map((l) => Number(l.trim().split(' ')[0]))).toEqual(Object.values(EXIT));
  });
});
