/**
 * `npm run bench:tracing`: what tracing costs the two apps on the request path, with the
 * telemetry as users run it (`node --import @rampart/telemetry/sdk/register`) exporting every
 * request's spans (the default sampler: always on) to a real Jaeger on loopback.
 *
 * 1. A real hub (untraced) with the demo site and its rules; Jaeger.
 * 2. The demo shop three times, WAF enforcing: every request traced (the default sampler), one
 *    request in ten traced (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `_ARG=0.1`), and
 *    without telemetry. Load: `GET /robots.txt` (the cheapest route, so tracing's share is the
 *    largest it can be) from wrk, 16 connections.
 * 3. prexy the same three ways in front of a static nginx origin, 10 regex rules on a 10 KiB
 *    page (started as its `npm start` starts it).
 * The apps measured run on core 0; wrk, Jaeger, the hub and the origin on core 1, so Jaeger's
 * own work (ingesting every span) is not counted as the apps'. The three processes of each app
 * take turns for three rounds, so a slow phase of the machine falls on all; figures are
 * medians of the rounds. Last line: JSON with the
 * requests/s ratios (traced / untraced) and the p99s.
 *
 * `BENCH_SECONDS` (default 8) sets each wrk run.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionDemoSite } from '@rampart/client-demo/dev/provision';
import { regexRules, shopPage } from '@rampart/prexy/bench/pages';
import { STREAMING_HEAP_FLAGS } from '@rampart/prexy/server/streaming-heap';
import { type DemoApp, startDemoApp } from '@rampart/test-services/demo-app';
import { findFreePort } from '@rampart/test-services/free-port';
import { startHub } from '@rampart/test-services/hub';
import { startJaeger } from '@rampart/test-services/jaeger-server';
import { startNginx } from '@rampart/test-services/nginx-server';
import {
  baseEnvironment,
  compiledEntry,
  startServiceProcess,
} from '@rampart/test-services/service-process';
import { telemetryEnvironment } from '@rampart/test-services/telemetry-environment';
import { runWrk, WRK_DONE_LUA, type WrkResult } from '@rampart/test-services/wrk';
import { processCpuMs } from './process-cpu.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = 3;
const APP_CPU = 0;
const LOAD_CPU = 1;
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Target {
  readonly url: string;
  readonly pid: () => number | undefined;
}

/** How each app is run: all requests traced, one in ten, or without telemetry. */
const VARIANTS = ['all', 'tenth', 'off'] as const;
type Variant = (typeof VARIANTS)[number];

interface App {
  readonly name: 'demo' | 'prexy';
  readonly what: string;
  readonly targets: Record<Variant, Target>;
}

interface Measured {
  readonly wrk: WrkResult;
  /** The app's CPU time per request, microseconds. */
  readonly cpuUs: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-bench-tracing-'));
  chmodSync(dir, 0o755); // nginx's workers (nobody) read the pages in it
  const script = join(dir, 'get.lua');
  writeFileSync(script, `wrk.headers["Accept"] = "text/html"\n${WRK_DONE_LUA}`);
  const jaeger = await startJaeger({ cpu: LOAD_CPU });
  /** The environment of a variant. */
  const environment = async (variant: Variant): Promise<Record<string, string>> => {
    if (variant === 'off') return {};
    return {
      ...telemetryEnvironment({
        otlpEndpoint: jaeger.otlpEndpoint,
        metricsPort: await findFreePort(),
      }),
      ...(variant === 'tenth'
        ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }
        : {}),
    };
  };
  const hub = await startHub();
  const stops: (() => Promise<unknown>)[] = [() => jaeger.stop(), () => hub.close()];
  try {
    const { key } = await provisionDemoSite({
      hubUrl: hub.url,
      adminToken: hub.adminToken,
      siteId: 'shop',
      keyFile: join(dir, 'site-key'),
      log: () => {},
    });
    hub.secrets.add(key);
    const demos = {} as Record<Variant, Target>;
    for (const variant of VARIANTS) {
      const demo: DemoApp = await startDemoApp({
        env: {
          RAMPART_MODE: 'enforce',
          RAMPART_HUB_URL: hub.url,
          RAMPART_SITE_KEY: key,
          ...(await environment(variant)),
        },
        cpu: APP_CPU,
      });
      stops.unshift(() => demo.close());
      demos[variant] = { url: `${demo.url}/robots.txt`, pid: () => demo.pid };
    }

    const pages = join(dir, 'pages');
    mkdirSync(pages);
    writeFileSync(join(pages, 'page-10k.html'), shopPage(10 * 1024));
    const originPort = await findFreePort();
    const origin = await startNginx({
      ports: [originPort],
      cpu: LOAD_CPU,
      http: `server { listen 127.0.0.1:${originPort}; location / { root ${pages}; default_type text/html; } }`,
    });
    stops.unshift(() => origin.stop());
    const prexies = {} as Record<Variant, Target>;
    for (const variant of VARIANTS) {
      const port = await findFreePort();
      const config = join(dir, `prexy-${port}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          listen: { host: '127.0.0.1', port },
          workers: 1,
          accessLog: false,
          sites: [
            {
              name: 'bench',
              proxy: {
                routes: [{ host: `127.0.0.1:${port}`, upstream: `http://127.0.0.1:${originPort}` }],
                ruleSets: [
                  { pathPrefix: '/', rules: regexRules(10).map((r) => ({ ...r, flags: 'g' })) },
                ],
              },
            },
          ],
        }),
      );
      const prexy = await startServiceProcess({
        name: 'prexy',
        main: compiledEntry('@rampart/prexy'),
        args: ['--config', config],
        // prexy's heap flags, as its `npm start` gives them (else it re-executes itself).
        nodeArgs: STREAMING_HEAP_FLAGS,
        env: { ...baseEnvironment(), ...(await environment(variant)) },
        port,
        readyPath: '/page-10k.html',
        cpu: APP_CPU,
      });
      stops.unshift(() => prexy.close());
      prexies[variant] = { url: `${prexy.url}/page-10k.html`, pid: () => prexy.pid };
    }

    const apps: App[] = [
      { name: 'demo', what: 'demo GET /robots.txt', targets: demos },
      { name: 'prexy', what: 'prexy 10 KiB, 10 rules', targets: prexies },
    ];
    const summary: Record<string, number> = {};
    for (const app of apps) {
      const rounds: Record<Variant, Measured>[] = [];
      for (const variant of VARIANTS) await measure(app.targets[variant], script, 2); // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        const measured = {} as Record<Variant, Measured>;
        // A different variant first each round.
        for (let k = 0; k < VARIANTS.length; k++) {
          const variant = VARIANTS[(round + k) % VARIANTS.length] as Variant;
          measured[variant] = await measure(app.targets[variant], script, SECONDS);
        }
        rounds.push(measured);
        const text = (v: Variant) =>
          `${v} ${measured[v].wrk.rps.toFixed(0)} rps ${measured[v].cpuUs.toFixed(1)} us CPU/request p99 ${measured[v].wrk.p99Ms.toFixed(2)} ms`;
        log(`${app.what}, round ${round + 1}: ${VARIANTS.map(text).join('; ')}`);
      }
      const of = (pick: (r: Record<Variant, Measured>) => number) => median(rounds.map(pick));
      for (const variant of ['all', 'tenth'] as const) {
        summary[`${app.name}_cpu_ratio_traced_${variant}`] = round2(
          of((r) => r[variant].cpuUs / r.off.cpuUs),
        );
        summary[`${app.name}_rps_ratio_traced_${variant}`] = round2(
          of((r) => r[variant].wrk.rps / r.off.wrk.rps),
        );
      }
      for (const variant of VARIANTS) {
        summary[`${app.name}_cpu_us_${variant}`] = round2(of((r) => r[variant].cpuUs));
        summary[`${app.name}_rps_${variant}`] = Math.round(of((r) => r[variant].wrk.rps));
        summary[`${app.name}_p99_ms_${variant}`] = round2(of((r) => r[variant].wrk.p99Ms));
      }
    }
    const services = await Promise.all(
      ['rampart-client-demo', 'rampart-prexy'].map(async (s) => (await jaeger.traces(s, 1)).length),
    );
    if (services.some((n) => n === 0)) throw new Error('Jaeger received no traces: nothing traced');
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A wrk run against `target`, with the app's CPU time over it. */
async function measure(target: Target, script: string, seconds: number): Promise<Measured> {
  const pid = target.pid();
  const before = pid === undefined ? null : processCpuMs(pid);
  const wrk = await runWrk({
    url: target.url,
    connections: 16,
    threads: 1,
    durationS: seconds,
    script,
    cpu: LOAD_CPU,
  });
  const after = pid === undefined ? null : processCpuMs(pid);
  const cpuMs = before === null || after === null ? Number.NaN : after - before;
  return { wrk, cpuUs: (cpuMs * 1000) / Math.max(1, wrk.requests) };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

await main();
