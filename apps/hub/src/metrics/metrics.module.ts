import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { SNAPSHOT_BUILD_QUEUE } from '../builds/build-queue.constants.js';
import { DashboardModule } from '../dashboard/dashboard.module.js';
import { DetectionModule } from '../detection/detection.module.js';
import { PublicationsModule } from '../publications/publications.module.js';
import { REPORT_INGEST_QUEUE } from '../reports/report-queue.constants.js';
import { SnapshotsModule } from '../snapshots/snapshots.module.js';
import { HubCounters } from './hub-counters.service.js';
import { HubMetrics } from './hub-metrics.js';
import { MetricsController } from './metrics.controller.js';

/** The hub's counters: `GET /v1/metrics` (JSON) and the Prometheus instruments. */
@Module({
  imports: [
    SnapshotsModule,
    PublicationsModule,
    DetectionModule,
    DashboardModule,
    BullModule.registerQueue({ name: REPORT_INGEST_QUEUE }, { name: SNAPSHOT_BUILD_QUEUE }),
  ],
  controllers: [MetricsController],
  providers: [HubCounters, HubMetrics],
  exports: [HubMetrics],
})
export class MetricsModule {}
