/**
 * This package's hub as a child process for integration tests: the shared launcher of
 * `@rampart/test-services/hub-process` pointed at the compiled `dist/main.js` (build it first
 * with `npx tsc -p tsconfig.build.json`), plus a start that is expected to fail (configuration
 * errors).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { delay, findFreePort } from '@rampart/test-services/free-port';
import {
  type HubProcess,
  hubEnvironment,
  type HubOptions as ProcessOptions,
  randomToken,
  startHub as startHubProcess,
} from '@rampart/test-services/hub-process';

export type { HubProcess };
export { randomToken };

/** The compiled entry point, resolved from this file (src/test-support -> dist/main.js). */
export const HUB_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export type HubOptions = Omit<ProcessOptions, 'main'>;

/** Starts this package's hub (see `@rampart/test-services/hub-process`). */
export function startHub(options: HubOptions): Promise<HubProcess> {
  return startHubProcess({ main: HUB_MAIN, ...options });
}

export interface FailedStart {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts the hub with `env` (merged over a valid test configuration) expecting it to exit, and
 * resolves with its exit code and output; rejects if it is still running after the deadline.
 */
export async function startHubExpectingFailure(
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 20_000,
): Promise<FailedStart> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-hub-'));
  const base = hubEnvironment(
    { redisUrl: 'redis://127.0.0.1:1' },
    await findFreePort(),
    dataDir,
    randomToken(),
  );
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...base, ...env })) {
    if (value !== undefined) merged[key] = value;
  }
  const child = spawn(process.execPath, [HUB_MAIN], {
    env: merged,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const code = await Promise.race([exited, delay(timeoutMs).then(() => 'timeout' as const)]);
    if (code === 'timeout') {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`the hub was still running after ${timeoutMs} ms:\n${stdout}${stderr}`);
    }
    return { code, stdout, stderr };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
