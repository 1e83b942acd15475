/**
 * `rampart substitute` (src/cli/substitute-command.ts), run in-process with in-memory streams.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../cli/cli-error.js';
import { main } from '../cli/main.js';
import { substituteCommand } from '../cli/substitute-command.js';

const dir = mkdtempSync(join(tmpdir(), 'rampart-substitute-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rulesFile = (rules: unknown) => {
  const path = join(dir, `rules-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(rules));
  return path;
};

async function run(argv: string[], input: Buffer) {
  let stderr = '';
  const io = { stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) } };
  const stdout = new PassThrough();
  const parts: Buffer[] = [];
  stdout.on('data', (b: Buffer) => parts.push(b));
  await substituteCommand(argv, io, { stdin: Readable.from([input]), stdout });
  return { out: Buffer.concat(parts), stderr };
}

describe('rampart substitute', () => {
  const rules = rulesFile([
    { pattern: 'a', replacement: '[$&]', flags: 'g' },
    { pattern: 'ab', replacement: '<$&>', flags: 'g' },
  ]);

  it('applies the rules to stdin, for every --chunk-size', async () => {
    for (const size of ['1', '2', '3', '100']) {
      const { out } = await run(['--rules', rules, '--chunk-size', size], Buffer.from('ab cab'));
      expect(out.toString()).toBe('[a]b c[a]b');
    }
  });

  it('honours --match-kind leftmost-longest', async () => {
    const { out } = await run(
      ['--rules', rules, '--match-kind', 'leftmost-longest'],
      Buffer.from('ab'),
    );
    expect(out.toString()).toBe('<ab>');
  });

  it('warns on stderr when --max-buffered is exceeded and passes the body through', async () => {
    const long = rulesFile([{ pattern: 'a.+a', replacement: 'X', flags: 'g' }]);
    const body = Buffer.from(`a${'-'.repeat(50)}a`);
    const { out, stderr } = await run(['--rules', long, '--max-buffered', '10'], body);
    expect(out.equals(body)).toBe(true);
    expect(stderr).toMatch(/warning: .*maxBufferedBytes \(10\)/);
  });

  it('a bad rule exits non-zero with the error message', async () => {
    let stderr = '';
    const bad = rulesFile([
      { pattern: 'ok', replacement: '' },
      { pattern: 'a(?=b)', replacement: '' },
    ]);
    const code = await main(['substitute', '--rules', bad], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (stderr += t) },
    });
    expect(code).toBe(EXIT.data);
    expect(stderr).toBe('rampart: rule 1 ("a(?=b)"): position 1: lookahead is not supported\n');
  });
});
