import { BullModule } from '@nestjs/bullmq';
import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from './auth/auth.module.js';
import { BuildsModule } from './builds/builds.module.js';
import { HubConfigModule } from './config/config.module.js';
import { HUB_CONFIG, type HubConfig } from './config/hub-config.js';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { CSP_REPORT_PATH } from './dashboard/dashboard-assets.js';
import { DatabaseModule } from './database/database.module.js';
import { DatasetsModule } from './datasets/datasets.module.js';
import { HealthModule } from './health/health.module.js';
import { JsonContentTypeMiddleware } from './http/json-content-type.middleware.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { ProxyConfigModule } from './proxy-config/proxy-config.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { RulesModule } from './rules/rules.module.js';
import { SitesModule } from './sites/sites.module.js';
import { SnapshotsModule } from './snapshots/snapshots.module.js';
import { StorageModule } from './storage/storage.module.js';
import { TelemetryModule } from './telemetry/telemetry.module.js';
import { TracesModule } from './traces/traces.module.js';

@Module({
  imports: [
    HubConfigModule,
    DatabaseModule,
    StorageModule,
    AuthModule,
    BullModule.forRootAsync({
      inject: [HUB_CONFIG],
      useFactory: (config: HubConfig) => ({
        connection: { url: config.redisUrl, maxRetriesPerRequest: null },
        prefix: 'rampart',
      }),
    }),
    SitesModule,
    RulesModule,
    ProxyConfigModule,
    DatasetsModule,
    BuildsModule,
    SnapshotsModule,
    ReportsModule,
    HealthModule,
    MetricsModule,
    TracesModule,
    TelemetryModule,
    DashboardModule,
  ],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(JsonContentTypeMiddleware)
      .exclude(
        { path: 'v1/datasets/{*path}', method: RequestMethod.PUT },
        { path: CSP_REPORT_PATH.slice(1), method: RequestMethod.POST }, // application/csp-report
      )
      .forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}
