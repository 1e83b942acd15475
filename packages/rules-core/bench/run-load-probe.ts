/**
 * Runs `load-probe.js` in a fresh `node --expose-gc` process and parses its one-line JSON report:
 * the memory and event-loop figures must come from a process that holds nothing but the snapshot.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadMeasurements } from './report.ts';

/**
 * Runs the probe `runs` times, one fresh process each, and reports the run with the median
 * first-load stall (with every run's stall alongside). On a shared two-core machine a single
 * run's longest gap often includes the scheduler running someone else's process, which is not a
 * stall the loader caused; the median of several runs is the loader's own figure.
 */
export async function runLoadProbes(snapshotPath: string, runs: number): Promise<LoadMeasurements> {
  const reports: LoadMeasurements[] = [];
  for (let i = 0; i < runs; i++) reports.push(await runLoadProbe(snapshotPath));
  reports.sort((a, b) => a.max_stall_ms - b.max_stall_ms);
  const median = reports[Math.floor(reports.length / 2)] as LoadMeasurements;
  return { ...median, stall_runs_ms: reports.map((r) => r.max_stall_ms) };
}

/** Opens the snapshot in a fresh `node --expose-gc` process (see `load-probe.ts`). */
export function runLoadProbe(snapshotPath: string): Promise<LoadMeasurements> {
  const script = fileURLToPath(new URL('./load-probe.ts', import.meta.url));
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
