/**
 * Load from a second process: wrk (C, one event loop per thread) against the app on loopback.
 *
 * The Lua script builds one request per client address once, in `init`, and sends them in turn
 * (the address goes in `X-Forwarded-For`, which the WAF believes from 127.0.0.1 only because the
 * benchmark configures it as a trusted proxy). Its `done` hook prints one JSON line with the
 * request count, errors and latency percentiles (microseconds, wrk's own histogram).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoadProcess } from './load-process.ts';

export interface WrkResult {
  readonly requests: number;
  readonly durationS: number;
  readonly rps: number;
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
  readonly script: string;
}

/** A browser-like GET (the headers the evaluator's header rules look at); every bench load sends them. */
export const BROWSER_HEADERS: Readonly<Record<string, string>> = {
  'User-Agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'Accept-Language': 'en-US,en;q=0.9,de;q=0.8',
  Referer: 'https://shop.example.com/products?category=garden',
  Cookie: 'theme=dark; consent=1',
};

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Writes the Lua script for `path` and `ips` into `dir`; returns its path. */
export function writeWrkScript(dir: string, path: string, ips: readonly string[]): string {
  const headers = Object.entries(BROWSER_HEADERS)
    .map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
    .join(', ');
  const script = `
local ips = { ${ips.map(luaString).join(', ')} }
local reqs = {}
local i = 0
init = function(args)
  for n, ip in ipairs(ips) do
    local h = { ${headers} }
    h["X-Forwarded-For"] = ip
    h["Host"] = wrk.host .. ":" .. wrk.port
    reqs[n] = wrk.format("GET", ${luaString(path)}, h)
  end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;
  const file = join(dir, 'bench.lua');
  writeFileSync(file, script);
  return file;
}

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.durationS}s`,
    '--timeout',
    '5s',
    '-s',
    run.script,
    run.url,
  ];
  const r = await runLoadProcess<Record<string, number>>({
    command: 'wrk',
    args,
    tag: 'WRK_JSON',
    cannotStart: (error) => `cannot run wrk (${error.message}); install it: apt-get install wrk`,
  });
  const durationS = (r.duration_us as number) / 1e6;
  return {
    requests: r.requests as number,
    durationS,
    rps: (r.requests as number) / durationS,
    errors: r.errors as number,
    p50Ms: (r.p50_us as number) / 1000,
    p90Ms: (r.p90_us as number) / 1000,
    p99Ms: (r.p99_us as number) / 1000,
    maxMs: (r.max_us as number) / 1000,
  };
}
