/**
 * The demo app as a child process, started exactly like production (`node dist/main.js`) with its
 * configuration in the environment. Start-up waits (bounded) for its "listening on" line; `stop()`
 * sends SIGTERM and SIGKILL after a grace period.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The compiled entry point, from this module in `src/bench` or `dist/bench`. */
export const DEMO_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface AppProcess {
  readonly url: string;
  readonly pid: number;
  output(): string;
  stop(): Promise<void>;
}

export async function startAppProcess(
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): Promise<AppProcess> {
  const child: ChildProcess = spawn(process.execPath, [DEMO_MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
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
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      process.removeListener('exit', killOnExit);
      resolve(code);
    }),
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = /listening on (http:\/\/\S+)/.exec(output);
    if (match?.[1]) return { url: match[1], pid: child.pid ?? -1, output: () => output, stop };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`the demo did not start within ${timeoutMs} ms:\n${output.slice(-3000)}`);
}
