/**
 * OpenTelemetry for unit tests: the SDK's in-memory exporter behind a simple span processor,
 * registered as this process's tracer provider (with the async-local-storage context manager
 * and W3C propagation, as the real SDK registers them), and a metric reader that collects on
 * demand. Tests read the spans and metrics the code under test produced through the public
 * OpenTelemetry API, exactly as they would reach Jaeger or Prometheus.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface SpanRecorder {
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[];
  /** Forgets the spans recorded so far. */
  reset(): void;
  /** Unregisters the provider (and the context manager and propagator). */
  close(): Promise<void>;
}

export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
    close: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Reads metrics on demand (no export interval). */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface MetricRecorder {
  /** Every metric recorded so far, collected now. */
  collect(): Promise<MetricData[]>;
  /** The metric named `name`, if recorded. */
  metric(name: string): Promise<MetricData | undefined>;
  close(): Promise<void>;
}

export function recordMetrics(): MetricRecorder {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const collect = async () => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  };
  return {
    collect,
    metric: async (name) => (await collect()).find((m) => m.descriptor.name === name),
    close: async () => {
      await provider.shutdown();
      metrics.disable();
    },
  };
}
