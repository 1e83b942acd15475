/**
 * Runs `load-probe.js` in a fresh `node --expose-gc` process and parses its one-line JSON report:
 * the memory and event-loop figures must come from a process that holds nothing but the snapshot.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadMeasurements } from './report.js';

/** Opens the snapshot in a fresh `node --expose-gc` process (see `load-probe.ts`). */
export function runLoadProbe(snapshotPath: string): Promise<LoadMeasurements> {
  const script = fileURLToPath(new URL('./load-probe.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, snapshotPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0)
        return reject(new Error(`load probe failed (exit ${code}): ${stderr.trim()}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as LoadMeasurements);
      } catch {
        reject(new Error(`load probe printed no JSON: ${stdout.trim()} ${stderr.trim()}`));
      }
    });
  });
}
