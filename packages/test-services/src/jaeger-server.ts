/**
 * A throwaway Jaeger (the v2 binary, `cmd/jaeger`, which the set-up builds from the Go module
 * proxy: see `scripts/bootstrap.sh --jaeger`) for tests and `npm run dev`: traces kept in
 * memory, an OTLP/HTTP receiver and the query API on loopback ports chosen for the run, its
 * own telemetry off (it would claim a fixed port), stopped by `stop()`.
 *
 * The binary is `options.binary`, else `$JAEGER_BIN`, else the one the set-up built into the
 * repository's `.tools/jaeger/bin`, else `jaeger` on the PATH. Readiness is the query API
 * answering `GET /api/services` with 200, polled for a bounded time; a Jaeger that exits first
 * (a bad configuration) fails the start with its output.
 *
 * The query API read here is Jaeger's HTTP JSON API (`/api/traces/{id}`, `/api/traces?service=`),
 * the one its UI uses; what it returns is typed below as far as the tests read it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { delay, findFreePort } from './free-port.js';
import { waitForOk } from './http-get.js';

export interface JaegerOptions {
  readonly binary?: string;
  /** Default 30 s (the first start of a fresh build reads a large binary). */
  readonly readyTimeoutMs?: number;
  /** Fixed ports (`npm run dev` keeps the usual ones); default free ones. */
  readonly otlpHttpPort?: number;
  readonly queryPort?: number;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Pin Jaeger to this core (taskset), away from what a benchmark measures. */
  readonly cpu?: number;
}

export interface JaegerSpanReference {
  readonly refType: 'CHILD_OF' | 'FOLLOWS_FROM';
  readonly traceID: string;
  readonly spanID: string;
}

export interface JaegerTag {
  readonly key: string;
  readonly type: string;
  readonly value: unknown;
}

export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: readonly JaegerSpanReference[];
  /** Microseconds since the epoch. */
  readonly startTime: number;
  /** Microseconds. */
  readonly duration: number;
  readonly tags: readonly JaegerTag[];
  readonly processID: string;
}

export interface JaegerTrace {
  readonly traceID: string;
  readonly spans: readonly JaegerSpan[];
  readonly processes: Readonly<Record<string, { readonly serviceName: string }>>;
}

/** A span a test sends Jaeger itself (OTLP/JSON), as an app's exporter would. */
export interface TestSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** Epoch milliseconds. */
  readonly startMs: number;
  readonly durationMs: number;
  readonly attributes?: Readonly<Record<string, string | number | boolean>>;
}

export interface JaegerHandle {
  /** Where apps send spans: `OTEL_EXPORTER_OTLP_ENDPOINT` (`http://127.0.0.1:<port>`). */
  readonly otlpEndpoint: string;
  /** The query API and UI: `http://127.0.0.1:<port>`. */
  readonly queryUrl: string;
  /** The traces of `service` (most recent first, at most `limit`). */
  traces(service: string, limit?: number): Promise<JaegerTrace[]>;
  /** One trace, or undefined when Jaeger does not have it (yet). */
  trace(traceId: string): Promise<JaegerTrace | undefined>;
  /** Sends `spans` to the OTLP/HTTP receiver (JSON encoding), as an app's exporter would. */
  ingest(spans: readonly TestSpan[]): Promise<void>;
  /** Stops Jaeger (SIGTERM, SIGKILL if it lingers) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** `spans` as an OTLP/JSON export request (one resource per service). */
export function otlpJson(spans: readonly TestSpan[]): unknown {
  const value = (v: string | number | boolean) =>
    typeof v === 'string'
      ? { stringValue: v }
      : typeof v === 'boolean'
        ? { boolValue: v }
        : Number.isInteger(v)
          ? { intValue: String(v) }
          : { doubleValue: v };
  const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();
  const services = [...new Set(spans.map((s) => s.service))];
  return {
    resourceSpans: services.map((service) => ({
      resource: { attributes: [{ key: 'service.name', value: value(service) }] },
      scopeSpans: [
        {
          scope: { name: 'rampart-test' },
          spans: spans
            .filter((s) => s.service === service)
            .map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId === undefined ? {} : { parentSpanId: s.parentSpanId }),
              name: s.name,
              kind: 2,
              startTimeUnixNano: nanos(s.startMs),
              endTimeUnixNano: nanos(s.startMs + s.durationMs),
              attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({
                key,
                value: value(v),
              })),
            })),
        },
      ],
    })),
  };
}

/** The binary the set-up builds (`scripts/bootstrap.sh --jaeger`), from this file's place. */
export function builtJaegerBinary(): string {
  const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  return join(packageRoot, '..', '..', '.tools', 'jaeger', 'bin', 'jaeger');
}

export function jaegerBinary(): string {
  if (process.env.JAEGER_BIN) return process.env.JAEGER_BIN;
  const built = builtJaegerBinary();
  return existsSync(built) ? built : 'jaeger';
}

/** The configuration of one run: memory store, OTLP/HTTP in, query API out. */
export function jaegerConfig(ports: {
  host: string;
  otlpHttp: number;
  queryHttp: number;
  queryGrpc: number;
}): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: ${ports.host}:${ports.queryHttp}
    grpc:
      endpoint: ${ports.host}:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${ports.host}:${ports.otlpHttp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

export async function startJaeger(options: JaegerOptions = {}): Promise<JaegerHandle> {
  const binary = options.binary ?? jaegerBinary();
  const host = options.host ?? '127.0.0.1';
  const ports = {
    host,
    otlpHttp: options.otlpHttpPort ?? (await findFreePort()),
    queryHttp: options.queryPort ?? (await findFreePort()),
    queryGrpc: await findFreePort(),
  };
  const dir = await mkdtemp(join(tmpdir(), 'rampart-jaeger-'));
  const config = join(dir, 'jaeger.yaml');
  await writeFile(config, jaegerConfig(ports));
  const [command, ...args] =
    options.cpu === undefined
      ? [binary, '--config', config]
      : ['taskset', '-c', String(options.cpu), binary, '--config', config];
  const child = spawn(command as string, args, {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<string>((done) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      done(
        error.code === 'ENOENT'
          ? `jaeger not found (tried ${JSON.stringify(binary)}): run the set-up (npm test builds it) or set JAEGER_BIN`
          : error.message,
      ),
    );
    child.once('exit', (code, signal) => done(`jaeger exited (${signal ?? `code ${code}`})`));
  });

  const queryUrl = `http://${host}:${ports.queryHttp}`;
  const stop = once(async () => {
    await terminate(child, exited);
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  });

  const outcome = await Promise.race([
    waitForOk(`${queryUrl}/api/services`, options.readyTimeoutMs ?? 30_000),
    exited.then((why) => `${why} during start-up`),
  ]);
  if (outcome !== 'ready') {
    await stop();
    throw new Error(`jaeger did not start: ${outcome}\n${output}`);
  }

  const getJson = async (path: string): Promise<unknown> => {
    const response = await fetch(`${queryUrl}${path}`, { signal: AbortSignal.timeout(5000) });
    if (response.status === 404) return undefined;
    if (!response.ok) throw new Error(`jaeger ${path}: status ${response.status}`);
    return response.json();
  };

  return {
    otlpEndpoint: `http://${host}:${ports.otlpHttp}`,
    queryUrl,
    async traces(service, limit = 100) {
      const found = (await getJson(
        `/api/traces?service=${encodeURIComponent(service)}&limit=${limit}&lookback=1h`,
      )) as { data?: JaegerTrace[] } | undefined;
      return found?.data ?? [];
    },
    async ingest(spans) {
      const response = await fetch(`http://${host}:${ports.otlpHttp}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(otlpJson(spans)),
        signal: AbortSignal.timeout(5000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`jaeger refused the spans: status ${response.status}`);
    },
    async trace(traceId) {
      const found = (await getJson(`/api/traces/${encodeURIComponent(traceId)}`)) as
        | { data?: JaegerTrace[] }
        | undefined;
      return found?.data?.[0];
    },
    stop,
  };
}

async function terminate(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), delay(5000).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

function once(step: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= step();
    return running;
  };
}
