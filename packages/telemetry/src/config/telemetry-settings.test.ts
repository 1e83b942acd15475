import { describe, expect, it } from 'vitest';
import {
  readTelemetrySettings,
  serviceNameOf,
  TelemetrySettingsError,
} from './telemetry-settings.js';

const app = { packageName: '@rampart/hub', version: '1.2.3', metricsPort: 9464 };
const read = (env: Record<string, string>) => readTelemetrySettings(env, app, 'instance-1');

describe('readTelemetrySettings', () => {
  it('starts traces over OTLP and a loopback Prometheus endpoint on the app port by default', () => {
    expect(read({})).toEqual({
      enabled: true,
      serviceName: 'rampart-hub',
      serviceVersion: '1.2.3',
      instanceId: 'instance-1',
      traces: true,
      protocol: 'http/protobuf',
      instrumentations: ['http', 'undici', 'ioredis', 'pg', 'express'],
      prometheus: { host: '127.0.0.1', port: 9464 },
      batch: {},
    });
  });

  it('installs the instrumentations the standard lists leave on, refusing unknown names', () => {
    expect(read({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'express, pg' }).instrumentations).toEqual([
      'http',
      'undici',
      'ioredis',
    ]);
    expect(
      read({
        OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,undici',
        OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'undici',
      }).instrumentations,
    ).toEqual(['http']);
    expect(() => read({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'fs' })).toThrow(
      /^OTEL_NODE_DISABLED_INSTRUMENTATIONS: "fs" is not an instrumentation here/,
    );
  });

  it('exports protobuf over HTTP unless told JSON; grpc is refused', () => {
    expect(read({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).toBe('http/json');
    expect(
      read({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).protocol,
    ).toBe('http/protobuf');
    expect(() => read({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toThrow(
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" is not supported/,
    );
  });

  it("reads the batch span processor's bounds, refusing nonsense", () => {
    expect(read({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '200' }).batch).toEqual({
      maxQueueSize: 100,
      scheduledDelayMillis: 200,
    });
    expect(() => read({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/^OTEL_BSP_MAX_QUEUE_SIZE: "0"/);
    expect(() => read({ OTEL_BSP_EXPORT_TIMEOUT: 'soon' })).toThrow(/OTEL_BSP_EXPORT_TIMEOUT/);
    expect(() => read({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096' })).toThrow(
      /must not be larger than OTEL_BSP_MAX_QUEUE_SIZE/,
    );
  });

  it('is off when OTEL_SDK_DISABLED is true, in any case, and only then', () => {
    expect(read({ OTEL_SDK_DISABLED: 'true' }).enabled).toBe(false);
    expect(read({ OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(read({ OTEL_SDK_DISABLED: 'false' }).enabled).toBe(true);
    expect(read({ OTEL_SDK_DISABLED: '1' }).enabled).toBe(true);
  });

  it('takes the service name, exporters and endpoint from the standard variables', () => {
    const settings = read({
      OTEL_SERVICE_NAME: 'edge-7',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_EXPORTER_PROMETHEUS_HOST: '0.0.0.0',
      OTEL_EXPORTER_PROMETHEUS_PORT: '9999',
    });
    expect(settings).toMatchObject({
      serviceName: 'edge-7',
      traces: false,
      prometheus: { host: '0.0.0.0', port: 9999 },
    });
    expect(read({ OTEL_METRICS_EXPORTER: 'none' }).prometheus).toBeUndefined();
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp,none' }).traces).toBe(true);
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        read(env);
      } catch (error) {
        expect(error).toBeInstanceOf(TelemetrySettingsError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ OTEL_EXPORTER_PROMETHEUS_PORT: '94 64' })).toMatch(
      /^OTEL_EXPORTER_PROMETHEUS_PORT: "94 64" is not a port/,
    );
    expect(refusal({ OTEL_EXPORTER_PROMETHEUS_PORT: '70000' })).toMatch(/not a port/);
    expect(refusal({ OTEL_TRACES_EXPORTER: 'zipkin' })).toMatch(
      /^OTEL_TRACES_EXPORTER: "zipkin" is not supported/,
    );
    expect(refusal({ OTEL_METRICS_EXPORTER: 'otlp' })).toMatch(/OTEL_METRICS_EXPORTER/);
  });
});

describe('cluster workers', () => {
  it('serve their metrics on the port plus their worker id', () => {
    expect(readTelemetrySettings({}, app, 'i', 3).prometheus?.port).toBe(9467);
    expect(
      readTelemetrySettings({ OTEL_EXPORTER_PROMETHEUS_PORT: '9600' }, app, 'i', 1).prometheus
        ?.port,
    ).toBe(9601);
  });
});

describe('serviceNameOf', () => {
  it('drops the scope marker', () => {
    expect(serviceNameOf('@rampart/client-demo')).toBe('rampart-client-demo');
    expect(serviceNameOf('shop')).toBe('shop');
  });
});
