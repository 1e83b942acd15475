/**
 * The telemetry this process started, for the app's shutdown path: spans still queued are
 * exported before the process exits ({@link flushTelemetry}). The app calls it whether or not
 * telemetry was loaded; without it, or with `OTEL_SDK_DISABLED`, it does nothing.
 *
 * Kept on a global symbol rather than in a module variable: `register.ts` is loaded by
 * `node --import` from one path and the app may resolve this package from another, which would
 * be two module instances.
 */
import type { RunningTelemetry } from './start-telemetry.js';

const KEY = Symbol.for('rampart.telemetry');

type Holder = { [KEY]?: RunningTelemetry };

export function setRunningTelemetry(running: RunningTelemetry): void {
  (globalThis as Holder)[KEY] = running;
}

/** The telemetry started in this process, if any. */
export function runningTelemetry(): RunningTelemetry | undefined {
  return (globalThis as Holder)[KEY];
}

/** Exports the queued spans and stops the SDK (within `timeoutMs`); a no-op without one. */
export async function flushTelemetry(timeoutMs = 5_000): Promise<void> {
  await runningTelemetry()?.shutdown(timeoutMs);
}
