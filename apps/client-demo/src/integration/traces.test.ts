/**
 * Traces, for real: Jaeger (the binary the set-up builds), the hub, the demo shop with the WAF
 * client, and prexy in front of the demo, each started as a user starts it with
 * `@rampart/telemetry` loaded (`node --import`), exporting to that Jaeger. The test sends
 * requests and reads Jaeger's query API until it finds what an operator would look for:
 *
 * - a blocked request: the demo's request span with the WAF's evaluate span under it;
 * - the report batch that told the hub about it: the client's flush span continued by the hub's
 *   ingestion job, and linked to the blocked request's trace;
 * - a request through prexy: prexy's server span, its stage spans, its upstream span, and the
 *   demo's request span under that, all one trace;
 * - the hub's dashboard API answering the event's trace, and every app's Prometheus endpoint.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STREAMING_HEAP_FLAGS } from '@rampart/prexy/server/streaming-heap';
import { type DemoApp, startDemoApp } from '@rampart/test-services/demo-app';
import { findFreePort } from '@rampart/test-services/free-port';
import { type Hub, startHub } from '@rampart/test-services/hub';
import {
  type JaegerHandle,
  type JaegerSpan,
  type JaegerTrace,
  startJaeger,
} from '@rampart/test-services/jaeger-server';
import {
  baseEnvironment,
  compiledEntry,
  type ServiceProcess,
  startServiceProcess,
} from '@rampart/test-services/service-process';
import { telemetryEnvironment } from '@rampart/test-services/telemetry-environment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionedSite } from '../test-support/provisioned-site.js';

const SITE = 'shop';
const WAIT_MS = 20_000;

let jaeger: JaegerHandle;
let hub: Hub;
let demo: DemoApp;
let prexy: ServiceProcess;
let dir: string;
const metricsPorts = { hub: 0, demo: 0, prexy: 0 };

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what} (${String(last ?? '')})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const tag = (span: JaegerSpan, key: string) => span.tags.find((t) => t.key === key)?.value;
const service = (trace: JaegerTrace, span: JaegerSpan) =>
  trace.processes[span.processID]?.serviceName;
const parentOf = (trace: JaegerTrace, span: JaegerSpan) => {
  const ref = span.references.find((r) => r.refType === 'CHILD_OF');
  return ref === undefined ? undefined : trace.spans.find((s) => s.spanID === ref.spanID);
};
/** `span`'s ancestors within its trace, nearest first. */
const ancestors = (trace: JaegerTrace, span: JaegerSpan): JaegerSpan[] => {
  const out: JaegerSpan[] = [];
  for (let at = parentOf(trace, span); at !== undefined; at = parentOf(trace, at)) out.push(at);
  return out;
};

/** The first trace of `service` that `pick` finds something in. */
async function findInTraces<T>(
  of: string,
  what: string,
  pick: (trace: JaegerTrace) => T | undefined,
): Promise<T> {
  let seen: JaegerTrace[] = [];
  try {
    return await until(what, async () => {
      seen = await jaeger.traces(of, 200);
      for (const trace of seen) {
        const found = pick(trace);
        if (found !== undefined) return found;
      }
      return undefined;
    });
  } catch (error) {
    // Say what Jaeger did hold, so a failure can be read without re-running.
    const held = seen
      .map((t) => t.spans.map((s) => `${service(t, s)}:${s.operationName}`).join(', '))
      .join('\n  ');
    throw new Error(`${(error as Error).message}; traces of ${of}:\n  ${held}`);
  }
}

beforeAll(async () => {
  jaeger = await startJaeger();
  dir = mkdtempSync(join(tmpdir(), 'rampart-traces-'));
  for (const name of Object.keys(metricsPorts) as (keyof typeof metricsPorts)[])
    metricsPorts[name] = await findFreePort();
  const traced = (name: keyof typeof metricsPorts) =>
    telemetryEnvironment({ otlpEndpoint: jaeger.otlpEndpoint, metricsPort: metricsPorts[name] });

  hub = await startHub({ env: { HUB_JAEGER_QUERY_URL: jaeger.queryUrl, ...traced('hub') } });
  const key = await provisionedSite(hub, SITE, dir);
  demo = await startDemoApp({
    env: {
      RAMPART_MODE: 'enforce',
      RAMPART_HUB_URL: hub.url,
      RAMPART_SITE_KEY: key,
      RAMPART_TRUSTED_PROXIES: '127.0.0.0/8',
      ...traced('demo'),
    },
  });
  demo.secrets.add(key);
  await until('the demo enforcing its rules', async () =>
    (await fetch(`${demo.url}/wp-admin/`)).status === 403 ? true : undefined,
  );

  const port = await findFreePort();
  const config = join(dir, 'prexy.json');
  writeFileSync(
    config,
    JSON.stringify({
      listen: { host: '127.0.0.1', port },
      workers: 1,
      sites: [
        {
          name: 'shop',
          proxy: {
            routes: [{ host: `127.0.0.1:${port}`, upstream: demo.url }],
            ruleSets: [
              {
                pathPrefix: '/',
                rules: [
                  {
                    pattern: 'Garden Supply',
                    replacement: 'Garden Supply (via prexy)',
                    flags: 'g',
                  },
                ],
              },
            ],
          },
        },
      ],
    }),
  );
  prexy = await startServiceProcess({
    name: 'prexy',
    main: compiledEntry('@rampart/prexy'),
    args: ['--config', config],
    // prexy's heap flags, as its `npm start` gives them (else it re-executes itself).
    nodeArgs: STREAMING_HEAP_FLAGS,
    env: { ...baseEnvironment(), ...traced('prexy') },
    port,
    readyPath: '/healthz',
  });
}, 120_000);

afterAll(async () => {
  await prexy?.close();
  await demo?.close();
  await hub?.close();
  await jaeger?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('traces in Jaeger', () => {
  let blockedTrace: string;

  it("puts the WAF's evaluate span under the demo's request span", async () => {
    expect((await fetch(`${demo.url}/wp-admin/setup-config.php`)).status).toBe(403);
    const found = await findInTraces('rampart-client-demo', 'the blocked request', (trace) => {
      const evaluate = trace.spans.find(
        (s) =>
          s.operationName === 'rampart.waf.evaluate' &&
          tag(s, 'rampart.waf.rule_id') === 'no-wp-admin',
      );
      // Under the request's server span (through the Express middleware span of the WAF).
      const request =
        evaluate && ancestors(trace, evaluate).find((s) => tag(s, 'span.kind') === 'server');
      return evaluate && request ? { trace, evaluate, request } : undefined;
    });
    expect(service(found.trace, found.request)).toBe('rampart-client-demo');
    expect(tag(found.request, 'http.response.status_code')).toBe(403);
    expect(found.evaluate).toMatchObject({ traceID: found.request.traceID });
    expect(tag(found.evaluate, 'rampart.waf.action')).toBe('block');
    expect(tag(found.evaluate, 'rampart.waf.outcome')).toBe('blocked');
    expect(tag(found.evaluate, 'rampart.snapshot.version')).toEqual(expect.any(Number));
    blockedTrace = found.trace.traceID;
  });

  it("continues the client's report flush in the hub's ingestion job, linked to the request", async () => {
    const found = await findInTraces(
      'rampart-client-demo',
      'a flush ingested by the hub',
      (trace) => {
        const flush = trace.spans.find(
          (s) =>
            s.operationName === 'rampart.report.flush' &&
            s.references.some((r) => r.traceID === blockedTrace),
        );
        const job = trace.spans.find((s) => s.operationName === 'process report-ingest');
        return flush && job ? { trace, flush, job } : undefined;
      },
    );
    expect(service(found.trace, found.job)).toBe('rampart-hub');
    expect(ancestors(found.trace, found.job)).toContainEqual(found.flush);
    expect(tag(found.job, 'messaging.system')).toBe('bullmq');
    expect(found.job.references.some((r) => r.traceID === blockedTrace)).toBe(true);
  });

  it('follows a request through prexy into the demo as one trace', async () => {
    const answer = await fetch(`${prexy.url}/`, { headers: { host: `127.0.0.1:${prexy.port}` } });
    expect(await answer.text()).toContain('Garden Supply (via prexy)');
    expect(answer.headers.get('server-timing')).toMatch(/upstream-connect;dur=/);
    const found = await findInTraces('rampart-prexy', 'a trace through prexy', (trace) => {
      const names = new Set(trace.spans.map((s) => s.operationName));
      const demoRequest = trace.spans.find(
        (s) => service(trace, s) === 'rampart-client-demo' && tag(s, 'span.kind') === 'server',
      );
      return ['prexy.upstream.connect', 'prexy.upstream.headers', 'prexy.substitution'].every((n) =>
        names.has(n),
      ) && demoRequest
        ? { trace, demoRequest }
        : undefined;
    });
    const chain = ancestors(found.trace, found.demoRequest);
    expect(chain.map((s) => service(found.trace, s))).toContain('rampart-prexy');
    expect(chain.some((s) => tag(s, 'span.kind') === 'client')).toBe(true);
    const substitution = found.trace.spans.find((s) => s.operationName === 'prexy.substitution');
    expect(tag(substitution as JaegerSpan, 'prexy.substitution.matches')).toBeGreaterThan(0);
  });

  it("answers an event's trace through the hub's API, with a link to Jaeger", async () => {
    const events = await hub.admin<{ path: string; traceId: string | null }[]>(
      'GET',
      `/v1/sites/${SITE}/events?action=block`,
    );
    const event = events.find((e) => e.traceId === blockedTrace);
    expect(event).toBeDefined();
    const trace = await hub.admin<{
      spans: { name: string; service: string; parentSpanId: string | null }[];
      jaegerUrl: string;
    }>('GET', `/v1/sites/${SITE}/traces/${blockedTrace}`);
    expect(trace.spans.map((s) => s.name)).toContain('rampart.waf.evaluate');
    expect(trace.jaegerUrl).toBe(`${jaeger.queryUrl}/trace/${blockedTrace}`);
    const unknown = await fetch(`${hub.url}/v1/sites/${SITE}/traces/${'0'.repeat(31)}1`, {
      headers: { authorization: `Bearer ${hub.adminToken}` },
    });
    expect(unknown.status).toBe(404);
  });
});

describe('Prometheus endpoints', () => {
  const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

  it('serve each app’s own metrics and the span processor’s', async () => {
    const demoText = await scrape(metricsPorts.demo);
    expect(demoText).toMatch(/^rampart_waf_decisions_total\{.*action="block".*\} [1-9]/m);
    expect(demoText).toMatch(/^rampart_snapshot_version\{/m);
    expect(demoText).toMatch(/^otel_sdk_processor_span_processed_total\{/m);
    const hubText = await scrape(metricsPorts.hub);
    expect(hubText).toMatch(/^rampart_hub_queue_jobs\{.*queue="report-ingest"/m);
    expect(hubText).toMatch(/^rampart_hub_report_events_total\{.*\} [1-9]/m);
    const prexyText = await scrape(metricsPorts.prexy);
    expect(prexyText).toMatch(/^prexy_requests_total\{.*\} [1-9]/m);
    expect(prexyText).toMatch(/^prexy_stage_duration_bucket\{.*stage="total"/m);
  });
});
