/**
 * `createRampart(options)`: the one entry point an app uses.
 *
 * ```ts
 * import { createRampart } from '@rampart/waf-client/rampart';
 * const rampart = createRampart({ hubUrl, siteKey });      // or RAMPART_* variables
 * app.use(rampart.middleware);                              // Express / Connect / node:http
 * await fastify.register(rampart.fastifyPlugin);            // or Fastify
 * await rampart.ready();                                    // optional: first snapshot or fail mode
 * process.on('SIGTERM', () => rampart.close());             // flushes reports
 * ```
 *
 * Creating the client validates the configuration (throwing {@link RampartConfigError}) and
 * starts the background work at once: loading the snapshot from the data directory, polling
 * the hub, flushing reports. All timers are unref'd, so the client's schedule never keeps a
 * process alive (only an HTTP exchange in flight does, bounded by its timeout; `close()` ends it).
 * Requests that arrive before a snapshot is loaded get the fail mode (`open` by default).
 *
 * Observability: with an OpenTelemetry SDK in the process (Rampart's apps load
 * `@rampart/telemetry`), the client records its spans and metrics through the OpenTelemetry
 * API (`telemetry/`); without one, the API is a no-op.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Snapshot } from '@rampart/rules-core/snapshot/reader';
import { TrustedProxies } from './client-ip/trusted-proxies.js';
import { type RampartConfig, type RampartOptions, resolveConfig } from './config/options.js';
import { GuardedLogger } from './logging/logger.js';
import { createConnectMiddleware } from './middleware/connect-middleware.js';
import { createFastifyPlugin, type RampartFastifyPlugin } from './middleware/fastify-plugin.js';
import { RequestHandler } from './middleware/request-handler.js';
import type { RampartRequestInfo } from './middleware/request-info.js';
import { SharedRateLimits } from './rate-limit/rule-keyed-limiter.js';
import { ReportFlusher } from './reports/report-flusher.js';
import { ReportQueue } from './reports/report-queue.js';
import { AppSignals, type SignalDetails, type SignalKind } from './signals/app-signals.js';
import { newStats, type Stats } from './stats/stats.js';
import { ActiveSnapshot } from './sync/active-snapshot.js';
import { SnapshotStore } from './sync/snapshot-store.js';
import { SnapshotSync } from './sync/snapshot-sync.js';
import { observeClientMetrics } from './telemetry/waf-metrics.js';

export { RampartConfigError } from './config/options.js';
export type {
  RampartConfig,
  RampartFastifyPlugin,
  RampartOptions,
  RampartRequestInfo,
  SignalDetails,
  SignalKind,
  Stats as RampartStats,
};

declare module 'node:http' {
  interface IncomingMessage {
    /** Set by the Rampart middleware: the request id, decision and client address. */
    rampart?: RampartRequestInfo;
  }
}

export interface Rampart {
  /** Express/Connect/node:http middleware. */
  readonly middleware: (
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ) => void;
  /** Fastify plugin (`fastify.register(rampart.fastifyPlugin)`), applies to the whole app. */
  readonly fastifyPlugin: RampartFastifyPlugin;
  /**
   * Reports what only the app knows about `req`, such as `'login_failed'` or
   * `'login_succeeded'` with the `account` tried: the hub's credential-stuffing detectors count
   * these. The account leaves the process only as an HMAC under the site's key. Never sampled,
   * never waits; sent within a quarter second. Throws only for an unknown kind.
   */
  signal(req: IncomingMessage, kind: SignalKind, details?: SignalDetails): void;
  /** Resolves once the first snapshot is in use or the initial sync gave up (fail mode then applies). */
  ready(): Promise<void>;
  /** Stops syncing, flushes reports (bounded by `closeTimeoutMs`), releases the snapshot. Idempotent. */
  close(): Promise<void>;
  /**
   * Calls `listener` with every snapshot the client starts using (the current one at once, if
   * any), in the turn of the swap. What embeds the client beyond request evaluation reads the
   * parts of the snapshot it needs there: prexy takes the site's proxy configuration from it,
   * so one sync serves both. Returns the function that stops the calls.
   */
  onSnapshot(listener: (snapshot: Snapshot, sha256: string) => void): () => void;
  /** A copy of the counters. */
  stats(): Stats;
  /** The validated configuration (the site key replaced by `[redacted]`). */
  readonly config: Readonly<RampartConfig>;
}

export function createRampart(options: RampartOptions = {}): Rampart {
  const config = resolveConfig(options);
  const logger = new GuardedLogger(options.logger ?? console, config.siteKey);
  const stats = newStats();
  const limits = new SharedRateLimits(config.rateLimitCapacity);
  const active = new ActiveSnapshot(limits, config);
  const queue = new ReportQueue(config.reportQueueSize);
  const on = config.mode !== 'off';
  const flusher = on
    ? new ReportFlusher(
        config,
        queue,
        stats,
        logger,
        () => active.current?.version ?? null,
        () => limits.takeKeyCounts(),
      )
    : null;
  const sync = on
    ? new SnapshotSync(
        config,
        new SnapshotStore(config.dataDir, logger),
        active,
        stats,
        logger,
        (size) => limits.heardFleetSize(size),
      )
    : null;
  const proxies = new TrustedProxies(config.trustedProxies);
  const signals = new AppSignals(proxies, active, queue, flusher, stats);
  const handler = new RequestHandler(config, proxies, active, queue, flusher, stats, logger, sync);

  const readStats = (): Stats => {
    stats.rateLimits.keys = limits.limiter.size;
    stats.rateLimits.evictions = limits.limiter.evictions;
    stats.rateLimits.fleetSize = limits.fleetSizeAt(Date.now());
    stats.reports.pending = queue.size;
    return structuredClone(stats);
  };
  const stopMetrics = observeClientMetrics(config.instanceId, readStats);

  flusher?.start();
  const ready = sync ? sync.start() : Promise.resolve();
  let closing: Promise<void> | undefined;

  // Mode off evaluates nothing, so it has nothing to batch: its requests continue at once.
  const batched = on && config.evaluation === 'batched';
  return {
    middleware: createConnectMiddleware(handler, batched),
    fastifyPlugin: createFastifyPlugin(handler, batched),
    config: Object.freeze({ ...config, siteKey: config.siteKey ? '[redacted]' : '' }),
    signal: (req, kind, details) => signals.signal(req, kind, details),
    onSnapshot: (listener) => active.subscribe((i) => listener(i.snapshot, i.sha256)),
    ready: () => ready,
    close: () => {
      closing ??= (async () => {
        stopMetrics();
        await sync?.stop();
        await flusher?.close();
        active.close();
      })();
      return closing;
    },
    stats: readStats,
  };
}
