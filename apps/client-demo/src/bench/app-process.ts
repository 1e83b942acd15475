/**
 * The demo app as a child process, started exactly like production (`node dist/main.js`) with its
 * configuration in the environment. Start-up waits (bounded) for its "listening on" line; `stop()`
 * sends SIGTERM and SIGKILL after a grace period.
 */
import { fileURLToPath } from 'node:url';
import { spawnNode } from '@rampart/test-services/node-process';

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
  const app = spawnNode(DEMO_MAIN, {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...env,
  });
  const stop = async () => {
    await app.stop();
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = /listening on (http:\/\/\S+)/.exec(app.output());
    if (match?.[1]) return { url: match[1], pid: app.pid, output: () => app.output(), stop };
    if (app.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`the demo did not start within ${timeoutMs} ms:\n${app.output().slice(-3000)}`);
}
