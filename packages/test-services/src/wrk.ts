/**
 * Load from a second process: wrk (C, one event loop per thread) against a server on loopback,
 * for every benchmark that needs saturating HTTP load.
 *
 * A benchmark's Lua script ends with {@link WRK_DONE_LUA}, whose `done` hook prints one tagged
 * JSON line (request count, bytes, errors, latency percentiles in microseconds from wrk's own
 * histogram) that {@link runWrk} reads back. `cpu` pins wrk to one core, so that the server
 * measured can have the other.
 */
import { runLoadProcess } from './load-process.js';

export interface WrkResult {
  readonly requests: number;
  readonly durationS: number;
  readonly rps: number;
  /** Response bytes read (headers included) per second, in MB (10^6). */
  readonly mbPerS: number;
  /** Socket errors and non-2xx/3xx answers. */
  readonly errors: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface WrkRun {
  readonly url: string;
  readonly connections: number;
  readonly threads: number;
  readonly durationS: number;
  /** A Lua script ending with {@link WRK_DONE_LUA}. */
  readonly script: string;
  /** Pin wrk to this core (taskset). */
  readonly cpu?: number;
}

/** The `done` hook every benchmark script ends with: one `WRK_JSON {...}` line. */
export const WRK_DONE_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const wrkArgs = [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.durationS}s`,
    '--timeout',
    '5s',
    '-s',
    run.script,
    run.url,
  ];
  const [command, ...args] =
    run.cpu === undefined
      ? ['wrk', ...wrkArgs]
      : ['taskset', '-c', String(run.cpu), 'wrk', ...wrkArgs];
  const r = await runLoadProcess<Record<string, number>>({
    command: command as string,
    args,
    tag: 'WRK_JSON',
    cannotStart: (error) => `cannot run wrk (${error.message}); install it: apt-get install wrk`,
  });
  const durationS = (r.duration_us as number) / 1e6;
  return {
    requests: r.requests as number,
    durationS,
    rps: (r.requests as number) / durationS,
    mbPerS: (r.bytes as number) / 1e6 / durationS,
    errors: r.errors as number,
    p50Ms: (r.p50_us as number) / 1000,
    p90Ms: (r.p90_us as number) / 1000,
    p99Ms: (r.p99_us as number) / 1000,
    maxMs: (r.max_us as number) / 1000,
  };
}
