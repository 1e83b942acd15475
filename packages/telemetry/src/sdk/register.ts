/**
 * `node --import @rampart/telemetry/sdk/register <app>`: Rampart's telemetry, loaded before the
 * app. Reads the settings (`config/telemetry-settings.ts`) and, unless `OTEL_SDK_DISABLED` is
 * true, registers the ESM loader hook the instrumentations patch imports through and starts
 * the SDK (`start-telemetry.ts`); then the app's modules load, instrumented.
 *
 * Worker threads run without their own SDK (the apps' workers do pure work: snapshot builds,
 * deltas); what they do is timed by the spans of the thread that started them.
 *
 * An invalid setting stops the process here with one line naming the variable (exit code 78,
 * configuration error), before the app starts half-observed.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { appDefaults } from '../config/service-identity.js';
import { readTelemetrySettings, TelemetrySettingsError } from '../config/telemetry-settings.js';
import { createLogger } from '../logging/logger.js';
import { setRunningTelemetry } from './lifecycle.js';
import { startTelemetry } from './start-telemetry.js';

const EXIT_CONFIG = 78;

if (isMainThread) {
  let settings: ReturnType<typeof readTelemetrySettings> | undefined;
  try {
    settings = readTelemetrySettings(
      process.env,
      appDefaults(process.argv[1]),
      randomUUID(),
      cluster.isWorker ? cluster.worker?.id : undefined,
    );
  } catch (error) {
    if (!(error instanceof TelemetrySettingsError)) throw error;
    process.stderr.write(`telemetry: invalid setting ${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  if (settings.enabled) {
    const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
    register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
    const logger = createLogger({ service: settings.serviceName, level: process.env.LOG_LEVEL });
    setRunningTelemetry(startTelemetry(settings, logger));
    await waitForAllMessagesAcknowledged();
  }
}
