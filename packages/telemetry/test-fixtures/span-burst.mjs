// A program under `--import @rampart/telemetry/sdk/register`, for register.test.ts: makes
// SPANS spans as fast as it can, then prints one JSON line with the time that took, whether
// the spans recorded, and its own Prometheus endpoint's text (if it has one).
import { trace } from '@opentelemetry/api';

const spans = Number(process.env.SPANS ?? 1000);
const tracer = trace.getTracer('burst');
const started = performance.now();
let recording = 0;
for (let i = 0; i < spans; i++) {
  const span = tracer.startSpan(`work ${i % 10}`);
  if (span.isRecording()) recording++;
  span.end();
}
const ms = performance.now() - started;
// Let the batch processor try (and fail) to export, and count what it dropped.
await new Promise((resolve) => setTimeout(resolve, Number(process.env.WAIT_MS ?? 800)));
let metrics = null;
const port = process.env.OTEL_EXPORTER_PROMETHEUS_PORT;
if (port) {
  try {
    metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  } catch {
    metrics = null;
  }
}
process.stdout.write(`${JSON.stringify({ ms, recording, metrics })}\n`);
process.exit(0);
