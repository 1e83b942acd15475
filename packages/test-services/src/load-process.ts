/**
 * A load generator run as its own process (wrk, the interleaved latency client): the benchmark
 * keeps its own event loop out of the load, and reads the generator's result from one tagged
 * line of its output (`TAG {json}`), since its other output is free text.
 */
import { spawn } from 'node:child_process';

export interface LoadProcess {
  readonly command: string;
  readonly args: readonly string[];
  /** The prefix of the result line; the rest of that line is JSON. */
  readonly tag: string;
  /** Kill the process after this long (default: no limit). */
  readonly timeoutMs?: number;
  /** The message when the command cannot be started (e.g. how to install it). */
  readonly cannotStart?: (error: Error) => string;
}

/** Runs the process to its end; its result line's JSON, or an error holding all its output. */
export function runLoadProcess<T>(run: LoadProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(run.command, run.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(run.timeoutMs === undefined ? {} : { timeout: run.timeoutMs }),
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('error', (error) =>
      reject(run.cannotStart ? new Error(run.cannotStart(error)) : error),
    );
    child.once('exit', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith(`${run.tag} `));
      if (code !== 0 || !line) {
        reject(new Error(`${run.command} exited with ${code ?? signal}:\n${out}`));
        return;
      }
      resolve(JSON.parse(line.slice(run.tag.length + 1)) as T);
    });
  });
}
