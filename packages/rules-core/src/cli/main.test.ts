import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../test-support/run-cli.js';
import { temporaryDirectory } from '../test-support/snapshot-fixture.js';
import { EXIT } from './cli-error.js';
import { EVALUATE } from './evaluate-command.js';
import { SNAPSHOT_BUILD } from './snapshot-build-command.js';
import { SNAPSHOT_INSPECT } from './snapshot-inspect-command.js';
import { SUBSTITUTE } from './substitute-command.js';
import { formatCommandUsage, optionTable } from './usage.js';

const tmp = temporaryDirectory();
afterAll(() => tmp.remove());
const file = (name: string, content: string) => {
  const path = join(tmp.dir, name);
  writeFileSync(path, content);
  return path;
};

const run = (...argv: string[]) => runCli(argv);

const rules = {
  rules: [
    { id: 'office', type: 'ip', action: 'allow', ranges: ['203.0.113.0/24'] },
    { id: 'geo', type: 'country', action: 'block', countries: ['XA'] },
    { id: 'hoster', type: 'asn', action: 'block', asns: [64500] },
    { id: 'drop', type: 'reputation', action: 'block', lists: ['drop'] },
    {
      id: 'scanner',
      type: 'pattern',
      action: 'block',
      when: [{ field: 'user_agent', match: 'contains', value: 'nikto' }],
    },
  ],
};

describe('rampart snapshot build / inspect / evaluate', () => {
  let snapshot: string;
  let args: string[];
  beforeAll(() => {
    snapshot = join(tmp.dir, 'site.sqlite');
    args = [
      'snapshot',
      'build',
      '--rules',
      file('rules.json', JSON.stringify(rules)),
      '--country',
      file('country.csv', '198.51.100.0,198.51.100.255,XA\n2001:db8::,2001:db8::ffff,XA\n'),
      '--asn',
      file('asn.csv', '192.0.2.0,192.0.2.255,64500,"Example, Hosting"\n'),
      '--reputation',
      file('drop.txt', '# Spamhaus-style\n100.66.0.0/16 ; SBL1\n'),
      '--version',
      '12',
      '--out',
      snapshot,
    ];
  });

  it('builds a snapshot and prints its summary', async () => {
    const { code, stdout, stderr } = await run(...args);
    expect(stderr).toBe('');
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(stdout)).toMatchObject({
      version: 12,
      ruleCount: 5,
      rangeCount: 5,
      skippedLines: 0,
    });
  });

  it('inspects the snapshot', async () => {
    const { code, stdout } = await run('snapshot', 'inspect', snapshot);
    expect(code).toBe(EXIT.ok);
    const info = JSON.parse(stdout);
    expect(info).toMatchObject({ version: 12, schemaVersion: 1, integrity: 'ok', ruleCount: 5 });
    expect(info.categories.country).toMatchObject({ ipv4Ranges: 1, ipv6Ranges: 1 });
    expect(info.rules[1]).toEqual({ id: 'geo', type: 'country', action: 'block', mode: 'enforce' });
  });

  it.each([
    [['--ip', '198.51.100.7'], 'geo'],
    [['--ip', '2001:DB8::1'], 'geo'],
    [['--ip', '192.0.2.1'], 'hoster'],
    [['--ip', '100.66.3.4'], 'drop'],
    [['--ip', '203.0.113.5', '--ua', 'Nikto/2.5'], 'office'],
    [['--ip', '10.0.0.1', '--header', 'User-Agent=nikto'], 'scanner'],
    [['--ip', '10.0.0.1', '--path', '/search?q=1'], null],
  ])('evaluates %j to rule %s', async (extra, ruleId) => {
    const { code, stdout } = await run('evaluate', '--snapshot', snapshot, ...extra);
    expect(code).toBe(EXIT.ok);
    const decision = JSON.parse(stdout);
    expect(decision.ruleId).toBe(ruleId);
    expect(decision.snapshotVersion).toBe(12);
  });
});

describe('bad input: one line on stderr and a non-zero exit', () => {
  const expectOneLine = (stderr: string, text: string) => {
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toContain(text);
  };

  it('usage errors exit 64', async () => {
    expect((await run()).code).toBe(EXIT.usage);
    const unknown = await run('snapshot', 'explode');
    expect(unknown.code).toBe(EXIT.usage);
    expectOneLine(unknown.stderr, 'unknown command "snapshot explode"');
    const missing = await run('snapshot', 'build', '--out', join(tmp.dir, 'x.sqlite'));
    expectOneLine(missing.stderr, '--rules is required');
    const flag = await run('evaluate', '--snapshot', 'x', '--ip', '1.2.3.4', '--colour', 'red');
    expect(flag.code).toBe(EXIT.usage);
    const ip = await run('evaluate', '--snapshot', 'x', '--ip', '1.2.3.256');
    expect(ip.code).toBe(EXIT.usage);
    expectOneLine(ip.stderr, 'octet is greater than 255');
  });

  it('invalid rules exit 65 naming the rule and field', async () => {
    const path = file(
      'bad-rules.json',
      JSON.stringify({ rules: [{ id: 'x', type: 'ip', action: 'block', ranges: ['10.0.0.300'] }] }),
    );
    const result = await run(
      'snapshot',
      'build',
      '--rules',
      path,
      '--out',
      join(tmp.dir, 'bad.sqlite'),
    );
    expect(result.code).toBe(EXIT.data);
    expectOneLine(result.stderr, 'rules[0] (id "x"): ranges[0]');
    const notJson = await run(
      'snapshot',
      'build',
      '--rules',
      file('nj.json', '{rules:'),
      '--out',
      join(tmp.dir, 'bad.sqlite'),
    );
    expect(notJson.code).toBe(EXIT.data);
    expectOneLine(notJson.stderr, 'not valid JSON');
  });

  it('a missing input file exits 66', async () => {
    const result = await run(
      'snapshot',
      'build',
      '--rules',
      join(tmp.dir, 'absent.json'),
      '--out',
      join(tmp.dir, 'o.sqlite'),
    );
    expect(result.code).toBe(EXIT.noInput);
    expectOneLine(result.stderr, 'ENOENT');
    expect((await run('snapshot', 'inspect', join(tmp.dir, 'absent.sqlite'))).code).toBe(
      EXIT.noInput,
    );
  });

  it('a bad dataset line exits 65 with file and line, or is skipped on request', async () => {
    const rulesPath = file('r.json', JSON.stringify({ rules: [] }));
    const csv = file('broken.csv', '1.0.0.0,1.0.0.255,AU\n1.0.1.0,banana,CN\n');
    const out = join(tmp.dir, 'broken.sqlite');
    const rejected = await run(
      'snapshot',
      'build',
      '--rules',
      rulesPath,
      '--country',
      csv,
      '--out',
      out,
    );
    expect(rejected.code).toBe(EXIT.data);
    expectOneLine(rejected.stderr, `${csv}:2`);
    const skipped = await run(
      'snapshot',
      'build',
      '--rules',
      rulesPath,
      '--country',
      csv,
      '--out',
      out,
      '--skip-bad-lines',
    );
    expect(skipped.code).toBe(EXIT.ok);
    expect(skipped.stderr).toContain(`skipped ${csv}:2`);
    expect(JSON.parse(skipped.stdout)).toMatchObject({ rangeCount: 1, skippedLines: 1 });
  });

  it('a file that is not a snapshot exits 65', async () => {
    const result = await run('snapshot', 'inspect', file('plain.txt', 'hello'));
    expect(result.code).toBe(EXIT.data);
    expectOneLine(result.stderr, 'not a SQLite database');
  });
});

describe('help: usage on stdout, exit 0, nothing on stderr', () => {
  /** Each command and every option it accepts: the specification its help must meet. */
  const commands = [
    [
      'snapshot build',
      SNAPSHOT_BUILD,
      ['--rules', '--country', '--asn', '--reputation', '--version', '--skip-bad-lines', '--out'],
    ],
    ['snapshot inspect', SNAPSHOT_INSPECT, []],
    [
      'evaluate',
      EVALUATE,
      ['--snapshot', '--ip', '--method', '--host', '--path', '--query', '--ua', '--header'],
    ],
    ['substitute', SUBSTITUTE, ['--rules', '--match-kind', '--max-buffered', '--chunk-size']],
  ] as const;

  describe.each(commands)('rampart %s', (name, spec, options) => {
    it.each(['--help', '-h'])(
      '%s prints what it does, each option and an example',
      async (flag) => {
        const { code, stdout, stderr } = await run(...name.split(' '), flag);
        expect(code).toBe(EXIT.ok);
        expect(stderr).toBe('');
        expect(stdout.startsWith(`rampart ${name}: ${spec.summary}\n`)).toBe(true);
        expect(stdout).toContain(`usage: rampart ${name} `);
        for (const option of [...options, '--help'])
          expect(stdout).toMatch(new RegExp(`^ +(-h, )?${option}\\b.* \\w`, 'm'));
        expect(stdout).toMatch(/^examples?:\n {2}rampart /m);
      },
    );

    it('accepts exactly the options its help lists', () => {
      expect(Object.keys(optionTable(spec)).map((o) => `--${o}`)).toEqual([...options, '--help']);
    });

    it('--help after other words still prints the help and runs nothing', async () => {
      const before = options[0] === undefined ? ['FILE'] : [options[0], 'FILE'];
      const { code, stdout } = await run(...name.split(' '), ...before, '--help');
      expect(code).toBe(EXIT.ok);
      expect(stdout).toBe(formatCommandUsage(spec));
    });

    it('is also "rampart help COMMAND"', async () => {
      const { code, stdout } = await run('help', ...name.split(' '));
      expect(code).toBe(EXIT.ok);
      expect(stdout).toBe(formatCommandUsage(spec));
    });
  });

  it('rampart --help, -h and help list every command and the exit codes', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const { code, stdout, stderr } = await run(flag);
      expect(code).toBe(EXIT.ok);
      expect(stderr).toBe('');
      for (const [name, spec] of commands) {
        const line = stdout.split('\n').find((l) => l.startsWith(`  ${name}  `));
        expect(line?.slice(name.length + 2).trim()).toBe(spec.summary);
      }
      expect(stdout).toContain(`${EXIT.unsupportedNode}  Node.js older than 22.12`);
    }
  });

  it('rampart alone prints the same list, but exits 64: it ran nothing', async () => {
    const { code, stdout } = await run();
    expect(code).toBe(EXIT.usage);
    expect(stdout).toBe((await run('--help')).stdout);
  });

  it('rampart snapshot alone lists its two commands and exits 64; with --help it exits 0', async () => {
    const alone = await run('snapshot');
    expect(alone.code).toBe(EXIT.usage);
    expect(alone.stderr).toBe('');
    expect(alone.stdout).toMatch(/^rampart snapshot: /);
    expect(alone.stdout).toMatch(/^ {2}snapshot build +build /m);
    expect(alone.stdout).toMatch(/^ {2}snapshot inspect +verify /m);
    expect(alone.stdout).not.toMatch(/^ {2}(evaluate|substitute) /m);
    for (const flag of ['--help', '-h']) {
      const help = await run('snapshot', flag);
      expect(help.code).toBe(EXIT.ok);
      expect(help.stdout).toBe(alone.stdout);
    }
  });

  it('an unknown option is still a usage error: exit 64, one line on stderr, nothing on stdout', async () => {
    const { code, stdout, stderr } = await run('evaluate', '--help-me');
    expect(code).toBe(EXIT.usage);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toContain("Unknown option '--help-me'");
    expect(stderr).toContain('(see "rampart evaluate --help")');
  });

  it('an unknown command points to the help of the level it was looked for in', async () => {
    expect((await run('explode')).stderr).toBe(
      'rampart: unknown command "explode" (try "rampart --help")\n',
    );
    expect((await run('snapshot', 'explode')).stderr).toBe(
      'rampart: unknown command "snapshot explode" (try "rampart snapshot --help")\n',
    );
  });
});

describe('the installed bin', () => {
  it('runs the compiled CLI and exits with its code', async () => {
    const bin = fileURLToPath(new URL('../../bin/rampart.js', import.meta.url));
    const result = await promisify(execFile)(process.execPath, [
      bin,
      'snapshot',
      'inspect',
      join(tmp.dir, 'none'),
    ]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(EXIT.noInput);
    expect(result.stderr).toMatch(/^rampart: cannot open snapshot .*none/);
  });
});
