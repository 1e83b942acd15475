/**
 * The environment that makes one of Rampart's programs export its traces to a test Jaeger:
 * `@rampart/telemetry` loaded before it (`NODE_OPTIONS=--import ...`, as a user runs it), spans
 * sent to `otlpEndpoint` in small, quick batches, its Prometheus endpoint on a port of the
 * test's choosing (each program of a test needs its own).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The compiled `--import` entry of `@rampart/telemetry` (built before the tests that use it). */
export function telemetryRegister(): string {
  const manifest = createRequire(import.meta.url).resolve('@rampart/telemetry/package.json');
  return pathToFileURL(join(dirname(manifest), 'dist', 'sdk', 'register.js')).href;
}

export function telemetryEnvironment(settings: {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`, e.g. a test Jaeger's `otlpEndpoint`. */
  readonly otlpEndpoint: string;
  /** `OTEL_EXPORTER_PROMETHEUS_PORT`. */
  readonly metricsPort: number;
  readonly serviceName?: string;
  /** More Node options for the program (e.g. `--cpu-prof`). */
  readonly nodeOptions?: string;
}): Record<string, string> {
  return {
    NODE_OPTIONS: `${settings.nodeOptions ?? ''} --import ${telemetryRegister()}`.trim(),
    OTEL_EXPORTER_OTLP_ENDPOINT: settings.otlpEndpoint,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_EXPORTER_PROMETHEUS_PORT: String(settings.metricsPort),
    ...(settings.serviceName === undefined ? {} : { OTEL_SERVICE_NAME: settings.serviceName }),
  };
}
