/**
 * A Node.js program as a child process, for tests and benchmarks that need the real thing
 * running beside them (the hub, the demo app): started with the Node running this code, its
 * standard output and error collected, killed if this process exits first, and stopped with
 * SIGTERM then SIGKILL after a grace period.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { delay } from './free-port.js';

export interface NodeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Settles with the exit code once the process has ended (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, SIGKILL after `graceMs` (default 10 s); resolves with the exit code. Idempotent. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface SpawnNodeOptions {
  /** The program's own arguments, after `main`. */
  readonly args?: readonly string[];
  /**
   * Node's and V8's options, before `main`, as a launcher's command line gives them: for the
   * flags `NODE_OPTIONS` does not accept (e.g. prexy's `--no-memory-reducer`).
   */
  readonly nodeArgs?: readonly string[];
  /** Pin to this core (through `taskset`, which execs node: the process id stays node's). */
  readonly cpu?: number;
}

/** Starts `node [...nodeArgs] <main> [...args]` with exactly `env` as its environment. */
export function spawnNode(
  main: string,
  env: Readonly<Record<string, string>>,
  { args = [], nodeArgs = [], cpu }: SpawnNodeOptions = {},
): NodeProcess {
  const argv = [process.execPath, ...nodeArgs, main, ...args];
  const [command, ...rest] = cpu === undefined ? argv : ['taskset', '-c', String(cpu), ...argv];
  const child = spawn(command as string, rest, {
    env: { ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      process.removeListener('exit', killOnExit);
      resolve(code);
    });
  });
  let stopping: Promise<number | null> | undefined;
  const stop = (graceMs = 10_000) => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const code = await Promise.race([exited, delay(graceMs).then(() => 'timeout' as const)]);
      if (code !== 'timeout') return code;
      child.kill('SIGKILL');
      return exited;
    })();
    return stopping;
  };
  return { child, pid: child.pid ?? -1, output: () => output, exited, stop };
}
