/**
 * Entry point: `node dist/main.js` (production) or `npm run dev` (watch mode, next to the hub).
 *
 * Reads the configuration (DEMO_* here, RAMPART_* in the WAF client), starts the WAF, opens,
 * migrates and seeds the database, listens, and shuts down cleanly on SIGTERM/SIGINT: stop
 * accepting, finish requests in flight, flush the WAF's reports, close the database.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createDemoApp } from './app.js';
import { ConfigError, loadConfig, wafDataDir } from './config/config.js';
import { createWaf } from './waf/waf.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;
const WAF_READY_WAIT_MS = 5_000;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(78); // EX_CONFIG
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  let waf: Awaited<ReturnType<typeof createWaf>>;
  try {
    waf = createWaf({ dataDir: wafDataDir(config) });
  } catch (error) {
    if ((error as Error).name === 'RampartConfigError') fail((error as Error).message);
    throw error;
  }
  const demo = await createDemoApp({ config, waf });
  // Give the WAF a moment to load its snapshot (from disk, else the hub) before taking traffic;
  // it never holds the start up for long: until it has one, its fail mode applies.
  await Promise.race([waf.ready(), sleep(WAF_READY_WAIT_MS, undefined, { ref: false })]);
  const { url } = await demo.listen();
  process.stdout.write(
    `[demo] listening on ${url} (database: ${demo.database.dialect}, WAF mode: ${waf.mode}, session secret from ${config.sessionSecretSource === 'env' ? 'DEMO_SESSION_SECRET' : `${config.dataDir}/session-secret`})\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`[demo] ${signal}: shutting down\n`);
    const timer = setTimeout(() => {
      process.stderr.write('[demo] shutdown took too long; exiting\n');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    demo.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(
          `[demo] shutdown failed: ${(error as Error).stack ?? String(error)}\n`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`[demo] failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
