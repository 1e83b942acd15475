/**
 * Starts the hub: validated configuration, JSON body limits, OpenAPI at /docs, graceful shutdown.
 *
 * Observability: JSON log lines with trace ids (`telemetry/json-logger.ts`), a span per handler
 * (`telemetry/handler-span.interceptor.ts`), and `Server-Timing: handler;dur=..., total;dur=...`
 * on every answer. Traces and the Prometheus endpoint come from `@rampart/telemetry`, loaded
 * before this file with `node --import` (see the README).
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { installBeforeHeaders } from '@rampart/telemetry/http/before-headers';
import { startRequestClock } from '@rampart/telemetry/http/request-clock';
import { appLogger } from '@rampart/telemetry/logging/logger';
import { AppModule } from './app.module.js';
import { HUB_CONFIG, type HubConfig, validateEnvironment } from './config/hub-config.js';
import {
  ASSET_MAX_AGE_MS,
  CSP_REPORT_MAX_BYTES,
  CSP_REPORT_TYPE,
  DASHBOARD_PATH,
  dashboardDist,
  SECURITY_HEADERS,
} from './dashboard/dashboard-assets.js';
import { AllowedMethods } from './http/allowed-methods.js';
import { createOpenApiDocument } from './http/openapi.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';
import { validationPipe } from './http/validation.js';
import { describeWait } from './snapshots/poll-wait.js';
import { HandlerSpanInterceptor } from './telemetry/handler-span.interceptor.js';
import { hubServerTiming } from './telemetry/hub-server-timing.js';
import { JsonLogger } from './telemetry/json-logger.js';

/** The service name on log lines when no telemetry runs (OTEL_SDK_DISABLED). */
const SERVICE = 'rampart-hub';

async function bootstrap(): Promise<void> {
  // Checked before Nest starts, so that a bad value stops the process with the one line below
  // rather than a framework error log with a stack trace (ConfigModule validates it again).
  validateEnvironment(process.env);
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bufferLogs: true });
  const config = app.get<HubConfig>(HUB_CONFIG);
  app.useLogger(new JsonLogger(appLogger(SERVICE), config.logLevel));
  app.use(startRequestClock);
  installBeforeHeaders(app.getHttpAdapter().getInstance(), [hubServerTiming]);
  app.useGlobalInterceptors(new HandlerSpanInterceptor());
  app.useBodyParser('json', { limit: config.maxJsonBytes });
  app.useBodyParser('json', { type: CSP_REPORT_TYPE, limit: CSP_REPORT_MAX_BYTES });
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  app.useGlobalPipes(validationPipe());
  app.enableShutdownHooks();
  const document = createOpenApiDocument(app);
  describeWait(document, config.maxPollWaitMs);
  // Every error, also of unknown routes and of the body parser, as an RFC 9457 problem.
  app.useGlobalFilters(new ProblemDetailsFilter(AllowedMethods.fromPaths(document.paths)));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
  const dashboard = dashboardDist();
  if (dashboard) {
    // The dashboard's hashed assets; its page (any other path under /ui) is DashboardController's.
    app.useStaticAssets(join(dashboard, 'assets'), {
      prefix: `${DASHBOARD_PATH}/assets/`,
      index: false,
      redirect: false,
      maxAge: ASSET_MAX_AGE_MS, // hashed names: a new build is new files
      immutable: true,
      setHeaders: (response) => {
        for (const [name, value] of Object.entries(SECURITY_HEADERS))
          response.setHeader(name, value);
      },
    });
  }
  await app.listen(config.port, config.host);
  Logger.log(
    `hub listening on http://${config.host}:${config.port} (OpenAPI at /docs, dashboard at /ui)`,
    'Hub',
  );
}

bootstrap().catch((error: unknown) => {
  // Configuration errors are already one readable line; anything else keeps its stack.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `hub: ${message.startsWith('invalid hub configuration') ? message : ((error as Error).stack ?? message)}\n`,
  );
  process.exit(1);
});
