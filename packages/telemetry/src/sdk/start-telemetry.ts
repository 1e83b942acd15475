/**
 * Starts OpenTelemetry in this process: the Node SDK (2.x) exporting spans over OTLP/HTTP, the
 * standard instrumentations, and a Prometheus endpoint for metrics. Called by `register.ts`
 * (the `node --import` entry) before the app's own modules load, so the instrumentations can
 * patch `http`, `undici`, `ioredis`, `pg` and `express` as they are imported.
 *
 * What a user can rely on:
 * - A collector that is down never crashes or slows the app. Spans wait in the batch span
 *   processor's bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, default 2048) and are exported off
 *   the request path; when the queue is full new spans are dropped, and every span's fate is
 *   counted on the metrics endpoint as `otel_sdk_processor_span_processed_total`
 *   (`error_type="queue_full"` for drops, the export error's name for failed exports). The
 *   SDK's warnings reach the log at most once a minute per kind.
 * - Resource attributes: `service.name`, `service.version`, `service.instance.id` (one per
 *   process), plus whatever `OTEL_RESOURCE_ATTRIBUTES` and the host and process detectors add.
 * - Spans travel as OTLP/HTTP protobuf (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json` for JSON).
 * - The Express instrumentation makes spans for routers and handlers, not for each middleware.
 * - The NestJS instrumentation is not installed: its newest release supports NestJS < 12, and
 *   the hub runs 12. The hub names its handler spans itself (a Nest interceptor); HTTP and
 *   Express spans come from their instrumentations as for the other apps.
 */
import type { IncomingMessage } from 'node:http';
import { DiagLogLevel, diag, metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { InstrumentationName, TelemetrySettings } from '../config/telemetry-settings.js';
import type { Logger } from '../logging/logger.js';
import { ThrottledDiagLogger } from './diag-logger.js';

/** `service.instance.id` (semantic conventions, still in the incubating set). */
const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';

/** Paths whose requests make no spans: probes and scrapes would drown the traces. */
const UNTRACED_PATHS = [/^\/health(z|\/|$)/, /^\/metrics(\/|$|\?)/];

/** How each instrumentation is made (only those the settings leave on are). */
const INSTRUMENTATION: Record<InstrumentationName, () => Instrumentation> = {
  http: () =>
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req: IncomingMessage) =>
        UNTRACED_PATHS.some((path) => path.test(req.url ?? '')),
    }),
  undici: () => new UndiciInstrumentation(),
  ioredis: () => new IORedisInstrumentation(),
  pg: () => new PgInstrumentation(),
  // Routers and handlers, not every middleware: a span per middleware was a large part of the
  // tracing cost of a cheap request (bench:tracing), and says little.
  express: () => new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
};

export interface RunningTelemetry {
  readonly settings: TelemetrySettings;
  /** Exports what is queued and stops; bounded by `timeoutMs`. */
  shutdown(timeoutMs?: number): Promise<void>;
}

export function startTelemetry(settings: TelemetrySettings, logger: Logger): RunningTelemetry {
  diag.setLogger(new ThrottledDiagLogger(logger), DiagLogLevel.WARN);
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: settings.serviceName,
    [ATTR_SERVICE_VERSION]: settings.serviceVersion,
    [ATTR_SERVICE_INSTANCE_ID]: settings.instanceId,
  });

  let prometheus: PrometheusExporter | undefined;
  if (settings.prometheus !== undefined) {
    const { host, port } = settings.prometheus;
    // A port that cannot be bound reaches the log through the diag logger (the exporter reports
    // it there); the app goes on without the endpoint.
    prometheus = new PrometheusExporter({ host, port });
  }
  const meterProvider = new MeterProvider({
    resource,
    readers: prometheus === undefined ? [] : [prometheus],
  });
  metrics.setGlobalMeterProvider(meterProvider);

  const spanProcessors = settings.traces
    ? [
        new BatchSpanProcessor({
          exporter:
            settings.protocol === 'http/json'
              ? new OTLPJsonTraceExporter()
              : new OTLPProtoTraceExporter(),
          ...settings.batch,
          selfObsMeterProvider: meterProvider,
        }),
      ]
    : [];
  const sdk = new NodeSDK({
    resource,
    spanProcessors,
    // Metrics are this module's own (above); logs go to standard output as JSON lines. Left
    // unset, the SDK would add OTLP exporters for both from the environment's defaults.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: settings.instrumentations.map((name) => INSTRUMENTATION[name]()),
  });
  sdk.start();

  let stopped: Promise<void> | undefined;
  return {
    settings,
    shutdown(timeoutMs = 5_000) {
      stopped ??= Promise.race([
        Promise.all([sdk.shutdown(), meterProvider.shutdown()]).then(() => undefined),
        new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]).catch((error: unknown) => {
        logger.warn({ err: error }, 'telemetry did not shut down cleanly');
      });
      return stopped;
    },
  };
}
