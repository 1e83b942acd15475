/**
 * The demo's wrk script (wrk itself runs through `@rampart/test-services/wrk`): the Lua script builds one request per client address once, in `init`, and sends them in turn
 * (the address goes in `X-Forwarded-For`, which the WAF believes from 127.0.0.1 only because the
 * benchmark configures it as a trusted proxy). Its `done` hook prints one JSON line with the
 * request count, errors and latency percentiles (microseconds, wrk's own histogram).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WRK_DONE_LUA } from '@rampart/test-services/wrk';

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
${WRK_DONE_LUA}`;
  const file = join(dir, 'bench.lua');
  writeFileSync(file, script);
  return file;
}
