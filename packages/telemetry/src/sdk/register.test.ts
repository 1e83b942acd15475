/**
 * `node --import @rampart/telemetry/sdk/register` for real: a small program
 * (`test-fixtures/span-burst.mjs`) makes a burst of spans while the OTLP endpoint is a closed
 * port (a collector that is down). The program neither crashes nor waits on the exporter, the
 * bounded queue drops what does not fit and the metrics endpoint counts it, and the SDK's
 * complaint reaches the log as JSON, once. `OTEL_SDK_DISABLED` starts nothing; a bad setting
 * stops the start naming the variable.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { findFreePort } from '@rampart/test-services/free-port';
import { describe, expect, it } from 'vitest';

const REGISTER = new URL('../../dist/sdk/register.js', import.meta.url).href;
const FIXTURE = fileURLToPath(new URL('../../test-fixtures/span-burst.mjs', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REGISTER, FIXTURE], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A port nothing listens on (found free, then left closed). */
async function closedPort(): Promise<number> {
  const port = await findFreePort();
  await new Promise<void>((resolve) => {
    const probe = createServer();
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
  return port;
}

const result = (r: Run) => {
  const line = r.stdout.split('\n').find((l) => l.startsWith('{"ms"'));
  if (line === undefined) throw new Error(`no result line: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as { ms: number; recording: number; metrics: string | null };
};

describe('the --import entry', () => {
  it('keeps a program going when the collector is down: bounded queue, drops counted, one log line', async () => {
    const metricsPort = await findFreePort();
    const r = await run({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_EXPORTER_PROMETHEUS_PORT: String(metricsPort),
      SPANS: '5000',
    });
    expect(r.code).toBe(0);
    const { recording, metrics } = result(r);
    expect(recording).toBe(5000);
    const dropped =
      /otel_sdk_processor_span_processed_total\{[^}]*error_type="queue_full"[^}]*\} (\d+)/.exec(
        metrics ?? '',
      );
    expect(Number(dropped?.[1])).toBeGreaterThanOrEqual(4800);
    // The SDK's own messages are JSON lines of the log, each kind once per minute.
    const sdkLines = r.stdout
      .split('\n')
      .filter((l) => l.includes('"component":"opentelemetry"'))
      .map((l) => JSON.parse(l) as { level: string; message: string; service: string });
    expect(sdkLines.length).toBeGreaterThan(0);
    expect(sdkLines.every((l) => l.service === 'rampart-telemetry')).toBe(true);
    const kinds = sdkLines.map((l) => `${l.level}:${l.message.replace(/\d+/g, '#')}`);
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it('starts nothing with OTEL_SDK_DISABLED=true: spans do not record, no metrics endpoint', async () => {
    const r = await run({
      OTEL_SDK_DISABLED: 'true',
      OTEL_EXPORTER_PROMETHEUS_PORT: String(await findFreePort()),
      SPANS: '100',
      WAIT_MS: '0',
    });
    expect(r.code).toBe(0);
    expect(result(r)).toMatchObject({ recording: 0, metrics: null });
  });

  it('stops the start on a setting it cannot honour, naming the variable', async () => {
    const r = await run({ OTEL_EXPORTER_PROMETHEUS_PORT: 'ninety' });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('OTEL_EXPORTER_PROMETHEUS_PORT: "ninety" is not a port');
    expect(r.stdout).toBe('');
  });
});
