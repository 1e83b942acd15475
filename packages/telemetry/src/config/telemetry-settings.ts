/**
 * What the telemetry of one process is configured with, read from its environment.
 *
 * The standard `OTEL_*` variables mean what the OpenTelemetry specification says; most are read
 * by the SDK's own components (the OTLP exporter reads `OTEL_EXPORTER_OTLP_*`, the batch span
 * processor `OTEL_BSP_*`, the tracer provider `OTEL_TRACES_SAMPLER*`, the resource
 * `OTEL_RESOURCE_ATTRIBUTES`). This module reads the few that decide what gets started:
 *
 * - `OTEL_SDK_DISABLED=true`: nothing is started; the API stays a no-op (spans cost nothing).
 * - `OTEL_TRACES_EXPORTER`: `otlp` (default) or `none`.
 * - `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`
 *   (default, as the specification recommends: smaller and cheaper to encode than JSON) or
 *   `http/json`; `grpc` is not offered.
 * - `OTEL_METRICS_EXPORTER`: `prometheus` (default) or `none`. Rampart serves metrics for
 *   Prometheus to scrape; OTLP metrics are not offered.
 * - `OTEL_EXPORTER_PROMETHEUS_HOST` / `_PORT`: where that endpoint listens. The host defaults to
 *   `127.0.0.1` (the exporter's own default would be every interface) and the port to the
 *   app's own default, so the hub, the demo and prexy can run side by side.
 * - `OTEL_SERVICE_NAME`: defaults to the app's package name (`@rampart/hub` -> `rampart-hub`).
 * - `OTEL_NODE_ENABLED_INSTRUMENTATIONS` / `OTEL_NODE_DISABLED_INSTRUMENTATIONS` (as the
 *   OpenTelemetry Node auto-instrumentation reads them): comma-separated names among `http`,
 *   `undici`, `ioredis`, `pg`, `express`; by default all are on.
 * - `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BSP_SCHEDULE_DELAY`,
 *   `OTEL_BSP_EXPORT_TIMEOUT`: the batch span processor's bounds, read here because Rampart
 *   builds the processor itself (to count what it drops on the metrics endpoint).
 *
 * An invalid value is an error naming the variable: a typo in a port should stop the start, not
 * silently move the endpoint.
 */

export interface TelemetrySettings {
  /** False when `OTEL_SDK_DISABLED` is true: nothing starts. */
  readonly enabled: boolean;
  readonly serviceName: string;
  readonly serviceVersion: string;
  /** `service.instance.id`: unique per process. */
  readonly instanceId: string;
  /** Export spans over OTLP/HTTP (`OTEL_TRACES_EXPORTER` is not `none`). */
  readonly traces: boolean;
  /** The instrumentations to install. */
  readonly instrumentations: readonly InstrumentationName[];
  /** How spans are encoded on the wire. */
  readonly protocol: 'http/protobuf' | 'http/json';
  /** The Prometheus endpoint, or undefined when `OTEL_METRICS_EXPORTER` is `none`. */
  readonly prometheus: { readonly host: string; readonly port: number } | undefined;
  /** The batch span processor's bounds given by `OTEL_BSP_*` (absent ones: the SDK's defaults). */
  readonly batch: BatchBounds;
}

export const INSTRUMENTATIONS = ['http', 'undici', 'ioredis', 'pg', 'express'] as const;
export type InstrumentationName = (typeof INSTRUMENTATIONS)[number];

export interface BatchBounds {
  readonly maxQueueSize?: number;
  readonly maxExportBatchSize?: number;
  readonly scheduledDelayMillis?: number;
  readonly exportTimeoutMillis?: number;
}

/** What the app itself says about the defaults (see `service-identity.ts`). */
export interface AppDefaults {
  readonly packageName: string;
  readonly version: string;
  /** The app's default metrics port. */
  readonly metricsPort: number;
}

export class TelemetrySettingsError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'TelemetrySettingsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `clusterWorker`: the `cluster` worker id when this process is one (prexy runs one per core).
 * Worker N serves its metrics on the configured port + N, the primary on the port itself, so
 * each process's counters have an endpoint of their own.
 */
export function readTelemetrySettings(
  env: Env,
  app: AppDefaults,
  instanceId: string,
  clusterWorker?: number,
): TelemetrySettings {
  const enabled = !flag(env, 'OTEL_SDK_DISABLED');
  const traces = exporterList(env, 'OTEL_TRACES_EXPORTER', ['otlp', 'none'], 'otlp') !== 'none';
  const metrics = exporterList(env, 'OTEL_METRICS_EXPORTER', ['prometheus', 'none'], 'prometheus');
  return {
    enabled,
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? serviceNameOf(app.packageName),
    serviceVersion: app.version,
    instanceId,
    traces,
    protocol: otlpProtocol(env),
    instrumentations: instrumentations(env),
    prometheus:
      metrics === 'none'
        ? undefined
        : {
            host: nonEmpty(env.OTEL_EXPORTER_PROMETHEUS_HOST) ?? '127.0.0.1',
            port:
              port(env, 'OTEL_EXPORTER_PROMETHEUS_PORT', app.metricsPort) + (clusterWorker ?? 0),
          },
    batch: batchBounds(env),
  };
}

function instrumentations(env: Env): InstrumentationName[] {
  const list = (name: string): InstrumentationName[] | undefined => {
    const value = nonEmpty(env[name]);
    if (value === undefined) return undefined;
    const names = value
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    const unknown = names.filter((n) => !(INSTRUMENTATIONS as readonly string[]).includes(n));
    if (unknown.length > 0)
      throw new TelemetrySettingsError(
        name,
        `${unknown.map((u) => JSON.stringify(u)).join(', ')} is not an instrumentation here (${INSTRUMENTATIONS.join(', ')})`,
      );
    return names as InstrumentationName[];
  };
  const enabled = list('OTEL_NODE_ENABLED_INSTRUMENTATIONS') ?? [...INSTRUMENTATIONS];
  const disabled = list('OTEL_NODE_DISABLED_INSTRUMENTATIONS') ?? [];
  return INSTRUMENTATIONS.filter((n) => enabled.includes(n) && !disabled.includes(n));
}

function otlpProtocol(env: Env): TelemetrySettings['protocol'] {
  const name = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = nonEmpty(env[name]) ?? 'http/protobuf';
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new TelemetrySettingsError(
    name,
    `${JSON.stringify(value)} is not supported (use http/protobuf or http/json)`,
  );
}

function batchBounds(env: Env): BatchBounds {
  const bounds: { -readonly [K in keyof BatchBounds]?: number } = {};
  const read = (name: string, field: keyof BatchBounds, min: number) => {
    const value = nonEmpty(env[name]);
    if (value === undefined) return;
    if (!/^\d+$/.test(value) || Number(value) < min)
      throw new TelemetrySettingsError(
        name,
        `${JSON.stringify(value)} is not a whole number >= ${min}`,
      );
    bounds[field] = Number(value);
  };
  read('OTEL_BSP_MAX_QUEUE_SIZE', 'maxQueueSize', 1);
  read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'maxExportBatchSize', 1);
  read('OTEL_BSP_SCHEDULE_DELAY', 'scheduledDelayMillis', 0);
  read('OTEL_BSP_EXPORT_TIMEOUT', 'exportTimeoutMillis', 0);
  if ((bounds.maxExportBatchSize ?? 0) > (bounds.maxQueueSize ?? 2048))
    throw new TelemetrySettingsError(
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
      'must not be larger than OTEL_BSP_MAX_QUEUE_SIZE (default 2048)',
    );
  return bounds;
}

/** `@rampart/hub` -> `rampart-hub`: a scope's `@` and `/` are not welcome in service names. */
export function serviceNameOf(packageName: string): string {
  return packageName.replace(/^@/, '').replace(/\//g, '-');
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** A boolean as the specification reads it: `true` (any case) is true, anything else false. */
function flag(env: Env, name: string): boolean {
  return nonEmpty(env[name])?.toLowerCase() === 'true';
}

function exporterList<T extends string>(
  env: Env,
  name: string,
  known: readonly T[],
  fallback: T,
): T {
  const value = nonEmpty(env[name])?.toLowerCase();
  if (value === undefined) return fallback;
  const names = value.split(',').map((v) => v.trim());
  const unknown = names.filter((n) => !(known as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new TelemetrySettingsError(
      name,
      `${unknown.map((u) => JSON.stringify(u)).join(', ')} is not supported (use ${known.join(' or ')})`,
    );
  }
  return names.includes(fallback) ? fallback : (names[0] as T);
}

function port(env: Env, name: string, fallback: number): number {
  const value = nonEmpty(env[name]);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) {
    throw new TelemetrySettingsError(name, `${JSON.stringify(value)} is not a port (0-65535)`);
  }
  return n;
}
