/**
 * Assembles the demo: database (migrated, seeded), the WAF, the middleware stack and the routes.
 *
 * Middleware order, and why:
 * 1. `startRequestClock`: the `total` of `Server-Timing` starts here.
 * 2. The WAF (`@rampart/waf-client`): before anything that costs (sessions, database, template
 *    rendering, body parsing), so a blocked request costs the app nothing. It sees every route.
 * 3. `markHandlerStart`: the `app` of `Server-Timing` starts here.
 * 4. Static assets, then the routes (`routes/routes.ts`), then 404 and error pages.
 * `Server-Timing` depends on the outcome and is written by a before-headers hook
 * (`@rampart/telemetry/http/before-headers`), so it is on every answer, the WAF's own block
 * pages included.
 *
 * Logs: one JSON line per event (`@rampart/telemetry/logging/logger`), with the trace and span
 * ids of the request; with `DEMO_LOG_REQUESTS`, one per request too.
 * The session cookie is also written just before the headers, by `cookie-session` (`on-headers`),
 * on the page routes only (`middleware/session.ts`).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { installBeforeHeaders } from '@rampart/telemetry/http/before-headers';
import { startRequestClock } from '@rampart/telemetry/http/request-clock';
import type { Logger } from '@rampart/telemetry/logging/logger';
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import type { DemoConfig } from './config/config.js';
import { type Database, openDatabase } from './db/database.js';
import { seed } from './db/seed.js';
import { markHandlerStart, serverTimingHook, type WafOutcome } from './middleware/server-timing.js';
import { routes } from './routes/routes.js';
import { decoyHash, type ScryptParams } from './security/password.js';
import { renderPage } from './views/engine.js';
import type { Waf } from './waf/waf.js';

export interface DemoAppOptions {
  readonly config: DemoConfig;
  /** The WAF (see `waf/waf.ts`); null runs the app without any WAF middleware at all. */
  readonly waf: Waf | null;
  /** Cheaper password hashing for tests; production uses the default. */
  readonly passwordParams?: ScryptParams;
  /** Where start-up facts, errors and request lines go (JSON lines: `appLogger`). */
  readonly logger: Logger;
  /**
   * The handlers at the WAF's place in the stack, in order; default the WAF's middleware alone
   * (none without a WAF). For programs that compose their own variant of the app, such as the
   * benchmark, which wraps or follows the WAF there (`apps/client-demo/bench/bench-app.ts`).
   */
  readonly wafStage?: readonly RequestHandler[];
  /** Machine routes mounted before the page routes (no session), such as a benchmark's probes. */
  readonly extraRoutes?: Router;
}

export interface DemoApp {
  readonly app: Express;
  readonly database: Database;
  readonly waf: Waf | null;
  /** True when this start inserted the seed data. */
  readonly seeded: boolean;
  /** Starts listening; resolves with the bound address (port 0 picks a free port). */
  listen(port?: number, host?: string): Promise<{ server: Server; url: string }>;
  /** Stops accepting connections, then closes the WAF (flushing its reports) and the database. */
  close(): Promise<void>;
}

const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

export async function createDemoApp(options: DemoAppOptions): Promise<DemoApp> {
  const { config, waf } = options;
  const { logger } = options;
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
  });
  let seeded = false;
  try {
    const applied = await database.migrate();
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');
    seeded = (await seed(database.db, options.passwordParams)).seeded;
    if (seeded) logger.info('seed data inserted (demo user and products: see the README)');
  } catch (error) {
    await database.close();
    throw error;
  }

  const session = {
    secret: config.sessionSecret,
    maxAgeSeconds: config.sessionMaxAgeSeconds,
    secure: config.secureCookies,
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  const wafOutcome = (req: Request): WafOutcome | undefined => (waf ? waf.outcome(req) : undefined);
  installBeforeHeaders(app, [serverTimingHook(wafOutcome)]);

  app.use(startRequestClock);
  if (config.logRequests) app.use(requestLog(logger, wafOutcome));
  for (const handler of options.wafStage ?? (waf ? [waf.middleware] : [])) app.use(handler);
  app.use(markHandlerStart);
  app.use('/assets', express.static(PUBLIC_DIR, { maxAge: '1h', index: false }));
  app.use(
    routes({
      database,
      session,
      decoyHash: decoyHash(options.passwordParams),
      loginSignals: waf ? (req, kind, account) => waf.signal(req, kind, account) : undefined,
      extra: options.extraRoutes,
    }),
  );
  app.use((req: Request, res: Response) => {
    res.status(404);
    renderPage(req, res, 'errors/not-found', { title: 'Not found' });
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).type('text/plain').send(`${status}\n`);
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) return;
    res.status(500);
    renderPage(req, res, 'errors/server-error', { title: 'Error' });
  });

  let server: Server | undefined;
  return {
    app,
    database,
    waf,
    seeded,
    async listen(port = config.port, host = config.host) {
      server = app.listen(port, host);
      await once(server, 'listening');
      server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
      const { port: bound } = server.address() as AddressInfo;
      return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}` };
    },
    async close() {
      if (server) {
        const closed = once(server, 'close');
        server.close();
        server.closeIdleConnections();
        await closed;
      }
      await waf?.close();
      await database.close();
    },
  };
}

/** One line per request: method, path, status, WAF decision, total time (no query string). */
function requestLog(logger: Logger, wafOutcome: (req: Request) => WafOutcome | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('finish', () => {
      const waf = wafOutcome(req);
      logger.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          waf: waf?.decision ? `${waf.decision.action}/${waf.mode}` : (waf?.mode ?? 'none'),
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    });
    next();
  };
}
