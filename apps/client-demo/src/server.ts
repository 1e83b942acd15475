/**
 * The demo as a running process: reads the configuration (DEMO_* here, RAMPART_* in the WAF
 * client), starts the WAF, opens, migrates and seeds the database, listens, and shuts down
 * cleanly on SIGTERM/SIGINT: stop accepting, finish requests in flight, flush the WAF's reports,
 * close the database.
 *
 * `main.ts` runs it as shipped. A program that needs its own variant of the app (the benchmark
 * adds probes and wraps the WAF) passes `compose`, which gets the WAF and returns what to add;
 * everything else, configuration and lifecycle included, stays the production path.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { appLogger } from '@rampart/telemetry/logging/logger';
import { flushTelemetry } from '@rampart/telemetry/sdk/lifecycle';
import { createDemoApp, type DemoAppOptions } from './app.js';
import { ConfigError, type DemoConfig, loadConfig, wafDataDir } from './config/config.js';
import { createWaf, type Waf } from './waf/waf.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;
const WAF_READY_WAIT_MS = 5_000;

/** What a variant adds to the app (see {@link DemoAppOptions}). */
export type AppVariant = Pick<DemoAppOptions, 'wafStage' | 'extraRoutes'>;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(78); // EX_CONFIG
}

/**
 * Starts the demo in this process and resolves once it listens; exits with 78 on a bad
 * configuration (one line naming every bad variable, never a secret).
 */
export async function runDemo(compose?: (waf: Waf) => AppVariant): Promise<void> {
  let config: DemoConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const logger = appLogger('rampart-client-demo');
  let waf: Waf;
  try {
    waf = createWaf({
      dataDir: wafDataDir(config),
      logger: logger.child({ component: 'rampart' }),
    });
  } catch (error) {
    if ((error as Error).name === 'RampartConfigError') fail((error as Error).message);
    throw error;
  }
  const demo = await createDemoApp({ config, waf, logger, ...compose?.(waf) });
  // Give the WAF a moment to load its snapshot (from disk, else the hub) before taking traffic;
  // it never holds the start up for long: until it has one, its fail mode applies.
  await Promise.race([waf.ready(), sleep(WAF_READY_WAIT_MS, undefined, { ref: false })]);
  const { url } = await demo.listen();
  logger.info(
    `listening on ${url} (database: ${demo.database.dialect}, WAF mode: ${waf.mode}, session secret from ${config.sessionSecretSource === 'env' ? 'DEMO_SESSION_SECRET' : `${config.dataDir}/session-secret`})`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: shutting down`);
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    demo
      .close()
      .then(() => flushTelemetry())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Runs {@link runDemo}; a failure to start is printed and ends the process with 1. */
export function runDemoOrExit(compose?: (waf: Waf) => AppVariant): void {
  runDemo(compose).catch((error: unknown) => {
    process.stderr.write(`[demo] failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
