/**
 * The `rampart` bin (bin/rampart.js) as a user's shell runs it: a child process on the compiled
 * CLI in dist/.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../test-support/run-cli.js';
import { EXIT } from './cli-error.js';
import { unsupportedNodeMessage } from './node-version.js';

const bin = fileURLToPath(new URL('../../bin/rampart.js', import.meta.url));

/** Runs the bin with `node [nodeArgs] bin args` and resolves to its exit code and output. */
async function runBin(nodeArgs: readonly string[], args: readonly string[]) {
  return promisify(execFile)(process.execPath, [...nodeArgs, bin, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    ({ code, stdout, stderr }: { code: number; stdout: string; stderr: string }) => ({
      code,
      stdout,
      stderr,
    }),
  );
}

/** `main` in this process, with the output it would write. */
const runMain = runCli;

/**
 * A preload that makes this Node.js report another version to the bin, the only thing the
 * check reads: what an old Node.js on PATH shows, without installing one.
 */
const reportingNode = (version: string) => [
  '--import',
  `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`,
];

describe('the rampart bin', () => {
  it('on a supported Node.js, runs the CLI with its arguments and exits with its code', async () => {
    for (const [args, code] of [
      [['--help'], EXIT.ok],
      [['snapshot'], EXIT.usage],
    ] as const) {
      const inProcess = await runMain(args);
      expect(inProcess.code).toBe(code);
      expect(await runBin([], args)).toEqual(inProcess);
    }
  });

  it('on a Node.js older than 22.12, prints what to run instead and runs nothing', async () => {
    const result = await runBin(reportingNode('20.20.2'), ['--help']);
    expect(result.code).toBe(EXIT.unsupportedNode);
    expect(result.stderr).toBe(unsupportedNodeMessage('20.20.2'));
    expect(result.stdout).toBe('');
  });
});
