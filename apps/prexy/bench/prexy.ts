/**
 * `npm run bench:prexy`: prexy against Debian's nginx with `subs_filter` (regex rules, `pcre_jit
 * on`) and `sub_filter` (literal rules), the same rules on the same pages, in one run on loopback.
 *
 * Layout on this 2-core machine: nginx serving the pages from disk (the origin, one worker) and
 * wrk share core 1; the proxy measured (one nginx worker, or one prexy worker) has core 0 alone.
 *
 * 1. Pages of 10 KiB, 100 KiB and 1 MiB (and 10 MiB for the mixed run) written to the origin.
 * 2. Per rule set (literal 10, regex 1, 10, 50): both proxies started with the rules; every page
 *    fetched through both and compared byte for byte (the run stops at the first difference);
 *    then wrk per page size against each: requests/s, MB/s, p50/p99 and the proxy's peak RSS.
 *    Prexy's bitmap cache is off here (`matchCacheBytes: 0`): the engine against the module.
 * 3. Mixed run (10 regex rules): 4 connections fetching the 10 MiB page while 32 fetch the 10 KiB
 *    one, on each proxy, the two taking turns for three rounds: the small requests' p99 and
 *    requests/s (medians; the ratio is the median of the rounds' ratios).
 * 4. The bitmap cache (50 rules), cache on against off (two prexy processes started for it and
 *    warmed alike, taking turns, three rounds, median of the rounds' gains; a process warmed
 *    for seconds serves a 50-rule page ~20% slower than one loaded for a minute, so the rule
 *    set's own process would flatter "off"), on two assets with a strong ETag: the
 *    100 KiB shop page (20 of the 50 rules match: the next responses run those 20) and a
 *    100 KiB article no rule matches (the next responses stream through unscanned).
 * 5. One 1 GiB page streamed through a freshly started prexy (10 rules): time, prexy's idle RSS
 *    before and peak RSS during the stream.
 *
 * Last line: JSON with the ratios (prexy / nginx; for p99 lower is better).
 * `BENCH_SECONDS` (default 8) sets each wrk run's length; `BENCH_CASES` (development only) runs
 * a subset of the rule sets (`literal-10,regex-1,regex-10,regex-50`).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { findFreePort } from '@rampart/test-services/free-port';
import {
  type NginxHandle,
  SUBS_FILTER_MODULE,
  startNginx,
} from '@rampart/test-services/nginx-server';
import {
  baseEnvironment,
  compiledEntry,
  type ServiceProcess,
  startServiceProcess,
} from '@rampart/test-services/service-process';
import { runWrk, WRK_DONE_LUA, type WrkResult } from '@rampart/test-services/wrk';
import {
  articlePage,
  type BenchRule,
  escapeLiteral,
  literalRules,
  regexRules,
  shopPage,
  subFilterDirectives,
  subsFilterDirectives,
} from './pages.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const HALF = Math.max(1, Math.round(SECONDS / 2));
const PROXY_CPU = 0;
const LOAD_CPU = 1;
const SIZES = [
  { name: '10k', bytes: 10 * 1024 },
  { name: '100k', bytes: 100 * 1024 },
  { name: '1m', bytes: 1024 * 1024 },
] as const;
const CONNECTIONS = 16;
/** Rounds of the runs that compare two processes taking turns (mixed run, bitmap cache). */
const ROUNDS = 3;

interface RuleSetCase {
  readonly name: string;
  readonly rules: readonly BenchRule[];
  readonly literal: boolean;
}

const ALL_CASES: readonly RuleSetCase[] = [
  { name: 'literal-10', rules: literalRules(), literal: true },
  { name: 'regex-1', rules: regexRules(1), literal: false },
  { name: 'regex-10', rules: regexRules(10), literal: false },
  { name: 'regex-50', rules: regexRules(50), literal: false },
];
/** `BENCH_CASES` (development only): a comma-separated subset of the rule sets, e.g. `regex-10`. */
const CASES = casesOf(process.env.BENCH_CASES);

function casesOf(names: string | undefined): readonly RuleSetCase[] {
  if (!names) return ALL_CASES;
  const wanted = names.split(',');
  const unknown = wanted.filter((n) => !ALL_CASES.some((c) => c.name === n));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_CASES: unknown ${unknown.join(', ')} (one of ${ALL_CASES.map((c) => c.name).join(', ')})`,
    );
  return ALL_CASES.filter((c) => wanted.includes(c.name));
}

interface Row {
  readonly rules: string;
  readonly page: string;
  readonly proxy: 'nginx' | 'prexy';
  readonly result: WrkResult;
  readonly peakRssMb: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const work = join(process.cwd(), '.bench-cache');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const script = join(work, 'get.lua');
  writeFileSync(script, `wrk.headers["Accept"] = "text/html"\n${WRK_DONE_LUA}`);

  const originPort = await findFreePort();
  const origin = await startNginx({
    ports: [originPort],
    cpu: LOAD_CPU,
    http: `
  sendfile on;
  open_file_cache max=100;
  server {
    listen 127.0.0.1:${originPort};
    keepalive_requests 1000000;
    location / { root ${join(work, 'pages')}; default_type text/html; types { text/html html; } }
  }`,
  });
  await mkdir(join(work, 'pages'));
  for (const size of [...SIZES, { name: '10m', bytes: 10 * 1024 * 1024 }]) {
    await writeFile(join(work, 'pages', `page-${size.name}.html`), shopPage(size.bytes));
  }
  await writeFile(join(work, 'pages', 'article-100k.html'), articlePage(100 * 1024));

  const rows: Row[] = [];
  let mixed:
    | { nginxP99Ms: number; prexyP99Ms: number; nginxRps: number; prexyRps: number; ratio: number }
    | undefined;
  /** On / off requests per second, median over the rounds, per asset. */
  const bitmap: Record<string, number> = {};
  let stream:
    | { seconds: number; idleRssMb: number; peakRssMb: number; bytesOut: number }
    | undefined;
  try {
    for (const c of CASES) {
      const nginx = await startNginxProxy(c, originPort);
      const prexy = await startPrexy(work, c, originPort, 0);
      try {
        await checkIdentical(c, nginx.port, prexy.port);
        for (const size of SIZES) {
          for (const proxy of ['nginx', 'prexy'] as const) {
            const port = proxy === 'nginx' ? nginx.port : prexy.port;
            const pid =
              proxy === 'nginx' ? (await nginx.handle.workerPids())[0] : prexy.process.pid;
            await load(port, `/page-${size.name}.html`, script, 2); // warm-up
            await resetPeak(pid);
            const result = await load(port, `/page-${size.name}.html`, script, SECONDS);
            const row = {
              rules: c.name,
              page: size.name,
              proxy,
              result,
              peakRssMb: await peakMb(pid),
            };
            rows.push(row);
            log(format(row));
          }
        }
        if (c.name === 'regex-10') {
          // Taking turns, so a slow phase of the machine falls on both proxies alike.
          const rounds: { nginx: WrkResult; prexy: WrkResult }[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            rounds.push({
              nginx: await mixedRun(nginx.port, script),
              prexy: await mixedRun(prexy.port, script),
            });
            const last = rounds[round] as { nginx: WrkResult; prexy: WrkResult };
            log(
              `mixed, round ${round + 1}: small p99 nginx ${last.nginx.p99Ms.toFixed(1)} ms (${last.nginx.rps.toFixed(0)} rps), prexy ${last.prexy.p99Ms.toFixed(1)} ms (${last.prexy.rps.toFixed(0)} rps)`,
            );
          }
          mixed = {
            nginxP99Ms: median(rounds.map((r) => r.nginx.p99Ms)),
            prexyP99Ms: median(rounds.map((r) => r.prexy.p99Ms)),
            nginxRps: median(rounds.map((r) => r.nginx.rps)),
            prexyRps: median(rounds.map((r) => r.prexy.rps)),
            ratio: median(rounds.map((r) => r.prexy.p99Ms / r.nginx.p99Ms)),
          };
          const fresh = await startPrexy(work, c, originPort, 0);
          try {
            stream = await streamGiB(work, fresh);
          } finally {
            await fresh.process.close();
          }
          log(
            `1 GiB through prexy: ${stream.seconds.toFixed(1)} s, RSS idle ${stream.idleRssMb.toFixed(0)} MB, peak ${stream.peakRssMb.toFixed(0)} MB`,
          );
        }
        if (c.name === 'regex-50') {
          const uncached = await startPrexy(work, c, originPort, 0);
          const cached = await startPrexy(work, c, originPort, 8 * 1024 * 1024);
          try {
            for (const path of ['/page-100k.html', '/article-100k.html']) {
              const original = await readFile(join(work, 'pages', path));
              const through = await get(cached.port, path);
              if (path.startsWith('/article') && !through.equals(original)) {
                throw new Error(`${path}: a bench rule matched the article page`);
              }
              await load(uncached.port, path, script, SECONDS);
              await load(cached.port, path, script, SECONDS);
              const gains: number[] = [];
              for (let round = 0; round < ROUNDS; round++) {
                const off = await load(uncached.port, path, script, HALF);
                const on = await load(cached.port, path, script, HALF);
                gains.push(on.rps / off.rps);
                log(
                  `bitmap cache, ${path}, 50 rules, round ${round + 1}: off ${off.rps.toFixed(0)} rps, on ${on.rps.toFixed(0)} rps`,
                );
              }
              if (!(await get(cached.port, path)).equals(through)) {
                throw new Error(`${path}: the bitmap cache changed the body`);
              }
              bitmap[path] = median(gains);
            }
          } finally {
            await cached.process.close();
            await uncached.process.close();
          }
        }
      } finally {
        await prexy.process.close();
        await nginx.handle.stop();
      }
    }
  } finally {
    await origin.stop();
    await rm(work, { recursive: true, force: true });
  }

  const find = (rules: string, page: string, proxy: string) =>
    rows.find((r) => r.rules === rules && r.page === page && r.proxy === proxy)?.result;
  const ratio = (rules: string, key: 'rps' | 'p99Ms') => {
    const p = find(rules, '100k', 'prexy');
    const n = find(rules, '100k', 'nginx');
    return p && n ? round(p[key] / n[key]) : null;
  };
  const gain = (g: number | undefined) => (g === undefined ? null : round(g));
  printTable(rows);
  const summary = {
    ratio_rps_vs_subs_filter_1_rule: ratio('regex-1', 'rps'),
    ratio_rps_vs_subs_filter_10_rules: ratio('regex-10', 'rps'),
    ratio_rps_vs_subs_filter_50_rules: ratio('regex-50', 'rps'),
    ratio_rps_vs_sub_filter_literal_10_rules: ratio('literal-10', 'rps'),
    ratio_p99_vs_subs_filter_10_rules: ratio('regex-10', 'p99Ms'),
    ratio_small_p99_vs_nginx_mixed: mixed ? round(mixed.ratio) : null,
    mixed_small_p99_ms_nginx: mixed ? round(mixed.nginxP99Ms) : null,
    mixed_small_p99_ms_prexy: mixed ? round(mixed.prexyP99Ms) : null,
    mixed_small_rps_nginx: mixed ? Math.round(mixed.nginxRps) : null,
    mixed_small_rps_prexy: mixed ? Math.round(mixed.prexyRps) : null,
    bitmap_cache_gain_50_rules: gain(bitmap['/page-100k.html']),
    bitmap_cache_gain_unmatched_asset: gain(bitmap['/article-100k.html']),
    idle_rss_mb: stream ? Math.round(stream.idleRssMb) : null,
    peak_rss_mb_1gib_stream: stream ? Math.round(stream.peakRssMb) : null,
    stream_1gib_mb_per_s: stream ? Math.round(stream.bytesOut / 1e6 / stream.seconds) : null,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

async function startNginxProxy(
  c: RuleSetCase,
  originPort: number,
): Promise<{ handle: NginxHandle; port: number }> {
  const port = await findFreePort();
  const filters = c.literal ? subFilterDirectives(c.rules) : subsFilterDirectives(c.rules);
  const handle = await startNginx({
    ports: [port],
    cpu: PROXY_CPU,
    modules: [SUBS_FILTER_MODULE],
    main: 'pcre_jit on;',
    http: `
  upstream origin { server 127.0.0.1:${originPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Accept-Encoding "";
      ${c.literal ? '' : 'subs_filter_types text/html;'}
      ${filters}
    }
  }`,
  });
  return { handle, port };
}

async function startPrexy(
  work: string,
  c: RuleSetCase,
  originPort: number,
  matchCacheBytes: number,
): Promise<{ process: ServiceProcess; port: number }> {
  const port = await findFreePort();
  const config = {
    listen: { host: '127.0.0.1', port },
    workers: 1,
    accessLog: false,
    matchCacheBytes,
    sites: [
      {
        name: 'bench',
        proxy: {
          routes: [{ host: `127.0.0.1:${port}`, upstream: `http://127.0.0.1:${originPort}` }],
          ruleSets: [
            {
              pathPrefix: '/',
              rules: c.rules.map((r) => ({
                pattern: c.literal ? escapeLiteral(r.pattern) : r.pattern,
                replacement: r.replacement.replace(/\$/g, c.literal ? '$$$$' : '$'),
                flags: 'g',
              })),
            },
          ],
        },
      },
    ],
  };
  const file = join(work, `prexy-${port}.json`);
  await writeFile(file, JSON.stringify(config));
  const service = await startServiceProcess({
    name: 'prexy',
    main: compiledEntry('@rampart/prexy'),
    args: ['--config', file],
    env: baseEnvironment(),
    port,
    readyPath: '/page-10k.html',
    cpu: PROXY_CPU,
  });
  return { process: service, port };
}

/** Every page through both proxies: the same bytes, or the run stops here. */
async function checkIdentical(c: RuleSetCase, nginxPort: number, prexyPort: number): Promise<void> {
  for (const size of SIZES) {
    const path = `/page-${size.name}.html`;
    const [a, b] = await Promise.all([get(nginxPort, path), get(prexyPort, path)]);
    if (a.equals(b)) continue;
    let at = 0;
    while (at < a.length && a[at] === b[at]) at++;
    const around = (x: Buffer) =>
      JSON.stringify(x.subarray(Math.max(0, at - 60), at + 60).toString());
    throw new Error(
      `${c.name} ${path}: nginx and prexy differ at byte ${at} (${a.length} vs ${b.length} bytes)\n  nginx: ${around(a)}\n  prexy: ${around(b)}`,
    );
  }
  log(`${c.name}: bodies identical on every page`);
}

function get(port: number, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function load(
  port: number,
  path: string,
  script: string,
  seconds: number,
  connections = CONNECTIONS,
) {
  return runWrk({
    url: `http://127.0.0.1:${port}${path}`,
    connections,
    threads: 1,
    durationS: seconds,
    script,
    cpu: LOAD_CPU,
  });
}

/** 4 connections on the 10 MiB page while 32 fetch the 10 KiB one; the small ones' figures. */
async function mixedRun(port: number, script: string): Promise<WrkResult> {
  const big = load(port, '/page-10m.html', script, SECONDS + 2, 4);
  await new Promise((r) => setTimeout(r, 1000));
  const small = await load(port, '/page-10k.html', script, SECONDS, 32);
  await big;
  return small;
}

/** One 1 GiB page (the 1 MiB page 1024 times) through prexy, read as fast as it comes. */
async function streamGiB(
  work: string,
  prexy: { process: ServiceProcess; port: number },
): Promise<{ seconds: number; idleRssMb: number; peakRssMb: number; bytesOut: number }> {
  const page = await readFile(join(work, 'pages', 'page-1m.html'));
  const file = join(work, 'pages', 'page-1g.html');
  const handle = await open(file, 'w');
  for (let i = 0; i < 1024; i++) await handle.write(page);
  await handle.close();
  const pid = prexy.process.pid;
  const idleRssMb = await rssMb(pid);
  await resetPeak(pid);
  const start = performance.now();
  const { bytes, digest } = await new Promise<{ bytes: number; digest: string }>(
    (resolve, reject) => {
      const hash = createHash('sha256');
      let n = 0;
      const req = request(
        {
          host: '127.0.0.1',
          port: prexy.port,
          path: '/page-1g.html',
          headers: { host: `127.0.0.1:${prexy.port}` },
        },
        (res) => {
          res.on('data', (c: Buffer) => {
            n += c.length;
            hash.update(c);
          });
          res.on('end', () => resolve({ bytes: n, digest: hash.digest('hex') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    },
  );
  const seconds = (performance.now() - start) / 1000;
  const one = await get(prexy.port, '/page-1m.html');
  if (bytes !== one.length * 1024) {
    throw new Error(
      `the 1 GiB page came out as ${bytes} bytes, not ${one.length * 1024} (digest ${digest})`,
    );
  }
  await rm(file);
  return { seconds, idleRssMb, peakRssMb: await peakMb(pid), bytesOut: bytes };
}

/** Resets the peak resident set of `pid` (Linux: `5` to clear_refs). */
async function resetPeak(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  await writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => undefined);
}

async function peakMb(pid: number | undefined): Promise<number> {
  return statusMb(pid, 'VmHWM');
}

async function rssMb(pid: number | undefined): Promise<number> {
  return statusMb(pid, 'VmRSS');
}

/** A memory figure of `/proc/<pid>/status`, in MB. */
async function statusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

function format(r: Row): string {
  const x = r.result;
  return `${r.rules.padEnd(10)} ${r.page.padEnd(4)} ${r.proxy.padEnd(5)} ${x.rps.toFixed(0).padStart(6)} rps ${x.mbPerS.toFixed(1).padStart(6)} MB/s  p50 ${x.p50Ms.toFixed(2).padStart(7)} ms  p99 ${x.p99Ms.toFixed(2).padStart(7)} ms  rss ${r.peakRssMb.toFixed(0).padStart(4)} MB${x.errors ? `  errors ${x.errors}` : ''}`;
}

function printTable(rows: readonly Row[]): void {
  log('\nrules      page  nginx rps  prexy rps  ratio  nginx p99  prexy p99  nginx RSS  prexy RSS');
  for (const r of rows.filter((x) => x.proxy === 'nginx')) {
    const p = rows.find((x) => x.proxy === 'prexy' && x.rules === r.rules && x.page === r.page);
    if (!p) continue;
    log(
      `${r.rules.padEnd(10)} ${r.page.padEnd(5)} ${r.result.rps.toFixed(0).padStart(9)} ${p.result.rps.toFixed(0).padStart(10)} ${(p.result.rps / r.result.rps).toFixed(2).padStart(6)} ${r.result.p99Ms.toFixed(1).padStart(10)} ${p.result.p99Ms.toFixed(1).padStart(10)} ${r.peakRssMb.toFixed(0).padStart(10)} ${p.peakRssMb.toFixed(0).padStart(10)}`,
    );
  }
}

await main();
