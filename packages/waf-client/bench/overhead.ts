/**
 * `npm run bench:overhead`: what the client costs an app, measured in-process.
 *
 * 1. Added latency per request: the middleware driven in a loop with prepared requests (a mix
 *    of passes, blocks, allow-listed and rate-limited requests, IPv4 and IPv6 peers), in
 *    `enforce`, `monitor` and `off` mode, against an empty loop. Reports are on (1% of passes
 *    sampled) and sent to a local receiver.
 * 2. The swap stall: the longest event-loop gap while the client downloads, verifies, opens and
 *    swaps a large snapshot (200 000 country ranges, 300 rules), measured by a 1 ms timer
 *    while requests keep being served; plus the synchronous evaluator build alone.
 *
 * 3. Tracing on: an OpenTelemetry SDK tracer provider in the process (batch span processor, an
 *    exporter that discards), each request handled inside a request span as the HTTP
 *    instrumentation makes one, sampled or not. The difference is what the client's tracing
 *    costs per request (the evaluate span, the event's `traceparent`); the request span itself
 *    is the instrumentation's cost, not the client's.
 *
 * Prints one JSON object. The lead's end-to-end bench (load tests against the demo app) is the
 * authoritative number; this one isolates the middleware. Every client here evaluates inline
 * (`evaluation: 'inline'`): a loop hands the middleware many requests in one event-loop turn,
 * which batched evaluation would hold to the turn's end, outside the timed calls. What batching
 * saves is a matter of scheduling under real load, which only the end-to-end bench measures.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { context, TraceFlags, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { startStallMonitor } from '@rampart/rules-core/bench/stall-monitor';
import type { CountryEntry } from '@rampart/rules-core/datasets/dataset';
import { Evaluator } from '@rampart/rules-core/evaluator/evaluator';
import { parseRuleSet } from '@rampart/rules-core/rules/validate';
import { openSnapshot } from '@rampart/rules-core/snapshot/reader';
import { writeSnapshot } from '@rampart/rules-core/snapshot/writer';
import type { RampartMode } from '@rampart/waf-client/config/options';
import { createRampart } from '@rampart/waf-client/rampart';
import { STANDARD_RULES } from '../src/test-support/snapshots.ts';

const KEY = 'rk_bench_key_0123456789abcdefghijklmnop';
const work = mkdtempSync(join(tmpdir(), 'rampart-bench-'));

interface Served {
  bytes: Buffer;
  sha256: string;
  version: number;
}

function snapshot(version: number, extraRules: number, countryRanges: number): Served {
  // The tests' rules (one of each decision type), a country rule, and `extraRules` patterns.
  const rules: unknown[] = [
    ...STANDARD_RULES,
    { id: 'geo', type: 'country', action: 'block', countries: ['KP'] },
  ];
  for (let i = 0; i < extraRules; i++) {
    rules.push({
      id: `p${i}`,
      type: 'pattern',
      action: 'block',
      when: [{ field: 'path', match: 'prefix', value: `/blocked-${i}/` }],
    });
  }
  const country: CountryEntry[] = [];
  for (let i = 0; i < countryRanges; i++) {
    const start = 0x0b000000 + i * 256; // 11.0.0.0 upwards, /24 each
    country.push({
      range: { family: 4, start: BigInt(start), end: BigInt(start + 255) },
      country: i % 50 === 0 ? 'KP' : 'DE',
    });
  }
  const path = join(work, `v${version}.sqlite`);
  writeSnapshot(path, { ruleSet: parseRuleSet({ rules }), country, version });
  const bytes = readFileSync(path);
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), version };
}

async function main(): Promise<void> {
  let current = snapshot(1, 20, 1000);
  const hub = createServer((req, res) => {
    if (req.url === '/v1/reports') {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
      return;
    }
    if (req.headers['if-none-match'] === `"${current.sha256}"`)
      return void res.writeHead(304).end();
    // The version lookup the client polls (no delta: the swap measured is a whole new file).
    if (req.url?.startsWith('/v1/snapshot/version')) {
      const { version, sha256 } = current;
      const answer = JSON.stringify({
        version,
        sha256,
        url: `/v1/snapshots/${sha256}`,
        delta: null,
      });
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    }
    res.writeHead(200, {
      'x-rampart-snapshot-sha256': current.sha256,
      'x-rampart-snapshot-version': String(current.version),
      'content-length': String(current.bytes.length),
    });
    res.end(current.bytes);
  });
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  const hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  const quiet = { info() {}, warn() {}, error() {} };

  const requests = makeRequests(10_000);
  const response = makeResponse();
  const noopNext = () => {};
  const N = 300_000;

  const perMode: Record<string, number> = {};
  const noop = (_req: unknown, _res: unknown, done: () => void) => done();
  const baseline = await measure(N, (i) => noop(fresh(requests, i), response, noopNext));
  const modes = (process.env.BENCH_ONLY?.split(',') ?? [
    'off',
    'monitor',
    'enforce',
  ]) as RampartMode[];
  for (const mode of modes) {
    const rampart = createRampart({
      hubUrl,
      siteKey: KEY,
      dataDir: join(work, `data-${mode}`),
      mode,
      evaluation: 'inline',
      env: {},
      logger: quiet,
      syncIntervalMs: 60_000,
      syncWaitMs: 0, // plain polls: the stand-in hub does not hold them
      syncEveryRequests: 0,
    });
    await rampart.ready();
    await measure(N / 3, (i) => rampart.middleware(fresh(requests, i), response, noopNext)); // warm-up
    perMode[mode] = await measure(N, (i) =>
      rampart.middleware(fresh(requests, i), response, noopNext),
    );
    await rampart.close();
  }

  // Tracing on: the same enforce client, each request inside a request span, sampled or not.
  const discard: SpanExporter = {
    export: (_spans: ReadableSpan[], done) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
  };
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(discard)] });
  provider.register();
  const traced = createRampart({
    hubUrl,
    siteKey: KEY,
    dataDir: join(work, 'data-traced'),
    mode: 'enforce',
    evaluation: 'inline',
    env: {},
    logger: quiet,
    syncIntervalMs: 60_000,
    syncWaitMs: 0,
    syncEveryRequests: 0,
  });
  await traced.ready();
  const requestSpan = trace.getTracer('bench').startSpan('GET /');
  const sampled = trace.setSpan(context.active(), requestSpan);
  const unsampled = trace.setSpan(
    context.active(),
    trace.wrapSpanContext({ ...requestSpan.spanContext(), traceFlags: TraceFlags.NONE }),
  );
  const inSpan = (ctx: typeof sampled) => (i: number) =>
    context.with(ctx, () => traced.middleware(fresh(requests, i), response, noopNext));
  await measure(N / 3, inSpan(sampled));
  await measure(N / 3, inSpan(unsampled));
  const tracing = { sampledMs: 0, unsampledMs: 0 };
  // Taking turns, so a slow phase of the machine falls on both.
  const sampledRounds: number[] = [];
  const unsampledRounds: number[] = [];
  for (let round = 0; round < 3; round++) {
    unsampledRounds.push(await measure(N / 3, inSpan(unsampled)));
    sampledRounds.push(await measure(N / 3, inSpan(sampled)));
  }
  tracing.sampledMs = Math.min(...sampledRounds);
  tracing.unsampledMs = Math.min(...unsampledRounds);
  requestSpan.end();
  await traced.close();
  await provider.shutdown();
  trace.disable();
  context.disable();

  // The evaluator alone on the same requests (what rules-core costs, for comparison).
  const snapshotFile = join(work, 'evaluator.sqlite');
  writeFileSync(snapshotFile, current.bytes);
  const evaluator = new Evaluator(await openSnapshot(snapshotFile));
  const infos = requests.map((r) => ({
    ip: r.socket?.remoteAddress ?? '',
    method: r.method ?? 'GET',
    host: 'shop.example',
    path: (r.url ?? '/').split('?')[0] ?? '/',
    query: (r.url ?? '').split('?')[1] ?? '',
    userAgent: r.headers?.['user-agent'] ?? '',
    headers: r.headers as Record<string, string>,
  }));
  await measure(N / 3, (i) =>
    evaluator.evaluate(infos[i % infos.length] as (typeof infos)[number]),
  );
  perMode.evaluatorOnly =
    (await measure(N, (i) =>
      evaluator.evaluate(infos[i % infos.length] as (typeof infos)[number]),
    )) + baseline;

  // Cold: the same requests with the CPU caches flushed before each one. Every function builds
  // its request object, so that subtracting `noop` leaves the WAF's own cost.
  const cold: Record<string, (i: number) => void> = {
    noop: (i) => noop(fresh(requests, i), response, noopNext),
    evaluatorOnly: (i) => {
      noop(fresh(requests, i), response, noopNext);
      evaluator.evaluate(infos[i % infos.length] as (typeof infos)[number]);
    },
  };
  const coldClients = [];
  for (const mode of ['off', 'enforce'] as const) {
    const client = createRampart({
      hubUrl,
      siteKey: KEY,
      dataDir: join(work, `data-cold-${mode}`),
      mode,
      evaluation: 'inline',
      env: {},
      logger: quiet,
      syncIntervalMs: 60_000,
      syncWaitMs: 0, // plain polls: the stand-in hub does not hold them
      syncEveryRequests: 0,
    });
    await client.ready();
    await measure(N / 3, (i) => client.middleware(fresh(requests, i), response, noopNext));
    cold[mode] = (i) => client.middleware(fresh(requests, i), response, noopNext);
    coldClients.push(client);
  }
  const coldMs = await measureCold(cold, 100, 100);
  for (const client of coldClients) await client.close();

  // The swap stall: a client serving requests while a large snapshot is swapped in.
  const rampart = createRampart({
    hubUrl,
    siteKey: KEY,
    dataDir: join(work, 'data-swap'),
    evaluation: 'inline',
    env: {},
    logger: quiet,
    syncIntervalMs: 60_000,
    syncWaitMs: 0, // plain polls: the stand-in hub does not hold them
    syncEveryRequests: 1,
  });
  await rampart.ready();
  const built = performance.now();
  const large = [snapshot(2, 300, 200_000), snapshot(3, 300, 200_000)];
  const buildMs = (performance.now() - built) / 2;
  // Two swaps: the first runs the loader's code cold (as right after start), the second warm.
  const swaps: { totalMs: number; maxStallMs: number; evaluatorBuildMs: number; served: number }[] =
    [];
  for (const next of large) {
    current = next;
    await new Promise((r) => setTimeout(r, 1100)); // nudges are at least 1 s apart
    const monitor = startStallMonitor();
    const swapStarted = performance.now();
    let served = 0;
    rampart.middleware(requests[0] as IncomingMessage, response, noopNext); // this request nudges a poll
    while (rampart.stats().snapshotVersion !== next.version) {
      for (let i = 0; i < 20; i++)
        rampart.middleware(
          requests[served++ % requests.length] as IncomingMessage,
          response,
          noopNext,
        );
      await new Promise((r) => setImmediate(r));
    }
    const totalMs = performance.now() - swapStarted;
    swaps.push({
      totalMs,
      maxStallMs: monitor.stop(),
      evaluatorBuildMs: rampart.stats().sync.lastSwapMs,
      served,
    });
  }
  await rampart.close();
  hub.close();
  hub.closeAllConnections();
  rmSync(work, { recursive: true, force: true });

  const ns = (ms: number) => Math.round(ms * 1e6);
  console.log(
    JSON.stringify(
      {
        node: process.version,
        requestsPerMode: N,
        addedNsPerRequest: Object.fromEntries(
          Object.entries(perMode).map(([m, ms]) => [m, ns(ms - baseline)]),
        ),
        tracing: {
          enforceUnsampledAddedNs: ns(tracing.unsampledMs - baseline),
          enforceSampledAddedNs: ns(tracing.sampledMs - baseline),
          clientTracingNsPerSampledRequest: ns(tracing.sampledMs - tracing.unsampledMs),
        },
        coldAddedNsPerRequest: Object.fromEntries(
          Object.entries(coldMs)
            .filter(([m]) => m !== 'noop')
            .map(([m, ms]) => [m, ns(ms - (coldMs.noop as number))]),
        ),
        swap: {
          snapshotBytes: current.bytes.length,
          countryRanges: 200_000,
          rules: 306,
          writeSnapshotMs: Math.round(buildMs),
          runs: swaps.map((w, i) => ({
            run: i === 0 ? 'cold' : 'warm',
            downloadVerifyOpenSwapMs: Math.round(w.totalMs),
            maxEventLoopStallMs: Number(w.maxStallMs.toFixed(1)),
            evaluatorBuildMs: Number(w.evaluatorBuildMs.toFixed(2)),
            requestsServedDuringSwap: w.served,
          })),
        },
      },
      null,
      2,
    ),
  );
}

/**
 * Milliseconds per call of `fn`: the best of 5 rounds of `n / 5` calls (on a shared machine the
 * best round is the one least disturbed by other processes). The loop yields to the event loop
 * every 500 calls, as a server does between requests, so the background work the calls cause
 * (report batches: JSON, gzip, POST) runs and is counted too.
 */
async function measure(n: number, fn: (i: number) => void): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  const round = Math.ceil(n / 5);
  for (let r = 0; r < 5; r++) {
    const started = performance.now();
    for (let i = 0; i < round; i++) {
      fn(r * round + i);
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    best = Math.min(best, (performance.now() - started) / round);
  }
  return best;
}

/** Four times this machine's L2 caches together: writing through it evicts them. */
const flushBuffer = new Uint32Array((4 << 20) / 4);

/** Writes one word per cache line of {@link flushBuffer}, so the next call starts cold. */
function flushCaches(): void {
  const buffer = flushBuffer;
  for (let k = 0; k < buffer.length; k += 16) buffer[k] = (buffer[k] as number) + 1;
}

/**
 * Milliseconds per call of each of `fns` with the CPU caches flushed before every call: what a
 * request costs on a busy server, where the app's own work evicts the client's code and tables
 * between two requests (the condition of the end-to-end `bench:middleware`, where this cost,
 * not the warm one, decides throughput). The flush is not timed. The functions take turns in
 * blocks of `perBlock` calls, starting with a different one each block, so a slow phase of a
 * shared machine hits them alike; the result is the median of the blocks' means.
 */
async function measureCold(
  fns: Record<string, (i: number) => void>,
  blocks: number,
  perBlock: number,
): Promise<Record<string, number>> {
  const names = Object.keys(fns);
  const means: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  let call = 0;
  for (let b = 0; b < blocks; b++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(b + k) % names.length] as string;
      const fn = fns[name] as (i: number) => void;
      let total = 0;
      for (let i = 0; i < perBlock; i++) {
        flushCaches();
        const started = performance.now();
        fn(call++);
        total += performance.now() - started;
      }
      means[name]?.push(total / perBlock);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return Object.fromEntries(
    names.map((n) => {
      const sorted = (means[n] as number[]).sort((a, b) => a - b);
      return [n, sorted[sorted.length >> 1] as number];
    }),
  );
}

/**
 * A new request object per call, as a server has: the middleware attaches `req.rampart`, and
 * reusing long-lived request objects would keep every result alive (a GC cost no server pays).
 */
function fresh(templates: readonly Partial<IncomingMessage>[], i: number): IncomingMessage {
  const t = templates[i % templates.length] as Partial<IncomingMessage>;
  return { url: t.url, method: t.method, headers: t.headers, socket: t.socket } as IncomingMessage;
}

/** A realistic mix: mostly passes, some blocks, allow-listed, rate-limited logins, IPv6. */
function makeRequests(n: number): Partial<IncomingMessage>[] {
  const out: Partial<IncomingMessage>[] = [];
  for (let i = 0; i < n; i++) {
    const kind = i % 100;
    const ip =
      kind < 10
        ? `2001:db8:${(i % 4096).toString(16)}::${(i % 65536).toString(16)}`
        : kind === 10
          ? '203.0.113.66'
          : kind === 11
            ? '198.51.100.9'
            : `192.0.${(i >> 8) & 255}.${i & 255}`;
    const path =
      kind === 12
        ? '/wp-admin/setup.php'
        : kind === 13
          ? '/login'
          : `/products/${i % 500}?page=${i % 7}`;
    out.push({
      url: path,
      method: kind === 13 ? 'POST' : 'GET',
      headers: {
        host: 'shop.example',
        'user-agent':
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
        accept: 'text/html',
      },
      socket: { remoteAddress: ip } as IncomingMessage['socket'],
    });
  }
  return out;
}

function makeResponse(): ServerResponse {
  const res = {
    headersSent: false,
    writeHead: () => res,
    setHeader: () => res,
    end: () => res,
  };
  return res as unknown as ServerResponse;
}

await main();
