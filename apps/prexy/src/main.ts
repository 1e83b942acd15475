#!/usr/bin/env node
/**
 * `prexy [--config FILE]`: starts the proxy with the configuration file (default
 * `$PREXY_CONFIG`, else `prexy.json` in the working directory). `PREXY_HOST`, `PREXY_PORT` and
 * `PREXY_WORKERS` override the file's `listen` and `workers`.
 *
 * Exit codes: 0 after a clean stop, 2 when the configuration is invalid (every problem is
 * printed with its field), 1 when the port cannot be bound.
 *
 * Signals: `SIGHUP` reloads the file (a file that no longer validates, or a rule set that does
 * not compile, is logged and the configuration in force stays); `SIGTERM`/`SIGINT` stop taking
 * connections and let requests in flight finish.
 *
 * Before anything else it makes sure it runs with a streaming proxy's heap settings (see
 * `server/streaming-heap.ts`): it may replace itself, keeping its process id, to add the flags.
 */
import cluster from 'node:cluster';
import { appLogger } from '@rampart/telemetry/logging/logger';
import { flushTelemetry } from '@rampart/telemetry/sdk/lifecycle';
import { type PrexyFile, PrexyFileError, readPrexyFile } from './config/prexy-file.js';
import { HubSites } from './hub/hub-sites.js';
import { RELOAD, STOP, superviseWorkers } from './server/cluster.js';
import { PrexyServer } from './server/prexy-server.js';
import { ensureStreamingHeap } from './server/streaming-heap.js';

function configPath(argv: readonly string[]): string {
  const at = argv.indexOf('--config');
  if (at >= 0 && argv[at + 1]) return argv[at + 1] as string;
  return process.env.PREXY_CONFIG ?? 'prexy.json';
}

async function load(path: string): Promise<PrexyFile> {
  const file = await readPrexyFile(path);
  const env = process.env;
  const port = env.PREXY_PORT === undefined ? file.listen.port : Number(env.PREXY_PORT);
  const workers = env.PREXY_WORKERS === undefined ? file.workers : Number(env.PREXY_WORKERS);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new PrexyFileError('PREXY_PORT', [
      { field: '', reason: 'must be a port from 0 to 65535' },
    ]);
  }
  if (!Number.isInteger(workers) || workers < 1) {
    throw new PrexyFileError('PREXY_WORKERS', [{ field: '', reason: 'must be an integer >= 1' }]);
  }
  return { ...file, listen: { host: env.PREXY_HOST ?? file.listen.host, port }, workers };
}

const logger = appLogger('rampart-prexy');
const log = (message: string) => logger.info(message);
const warn = (message: string) => logger.warn(message);

/** A start that cannot go on: one plain line on stderr (the CLI contract), then `code`. */
function refuse(message: string, code: number): never {
  process.stderr.write(`prexy: ${message}\n`);
  process.exit(code);
}

async function runWorker(path: string, file: PrexyFile, standalone: boolean): Promise<void> {
  let hubSites: HubSites | undefined;
  const prexy = new PrexyServer(file, { logger, edgeGuard: (site) => hubSites?.guard(site) });
  try {
    hubSites = new HubSites(file.sites, {
      install: (sites) => prexy.install(sites),
      warn,
      worker: cluster.worker ? `worker-${cluster.worker.id}` : 'main',
    });
  } catch (error) {
    refuse(`invalid configuration: ${(error as Error).message}`, 2);
  }
  try {
    await prexy.listen();
  } catch (error) {
    refuse(
      `cannot listen on ${file.listen.host}:${file.listen.port}: ${(error as Error).message}`,
      1,
    );
  }
  if (standalone || cluster.worker?.id === 1) {
    log(
      `listening on http://${file.listen.host}:${file.listen.port} (${file.workers} worker${file.workers > 1 ? 's' : ''}), serving ${prexy.routes.hosts.join(', ') || 'no host yet (waiting for the hub)'}`,
    );
  }
  const reload = async () => {
    try {
      const next = await load(path);
      hubSites?.reloadFile(next.sites);
      log(`configuration reloaded from ${path}`);
    } catch (error) {
      warn(`reload refused, the configuration in force stays: ${(error as Error).message}`);
    }
  };
  const stop = async () => {
    await prexy.close();
    await hubSites?.close();
    await flushTelemetry();
    process.exit(0);
  };
  if (standalone) {
    process.on('SIGHUP', () => void reload());
    process.on('SIGTERM', () => void stop());
    process.on('SIGINT', () => void stop());
  } else {
    process.on('message', (message) => {
      if (message === RELOAD) void reload();
      if (message === STOP) void stop();
    });
    // The primary relays signals; a worker ignores its own SIGINT from a terminal's Ctrl-C.
    process.on('SIGINT', () => undefined);
  }
}

async function main(): Promise<void> {
  const path = configPath(process.argv.slice(2));
  let file: PrexyFile;
  try {
    file = await load(path);
  } catch (error) {
    refuse(
      error instanceof PrexyFileError ? `invalid configuration: ${error.message}` : String(error),
      2,
    );
  }
  if (cluster.isPrimary && file.workers > 1) {
    superviseWorkers(file.workers, log);
    return;
  }
  await runWorker(path, file, cluster.isPrimary);
}

ensureStreamingHeap();
await main();
