import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { DetectionModule } from '../detection/detection.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { SnapshotsModule } from '../snapshots/snapshots.module.js';
import { AddressLabelsService } from './address-labels.js';
import { ReportIngestProcessor } from './report-ingest.processor.js';
import { REPORT_INGEST_QUEUE } from './report-queue.constants.js';
import { ReportQueueService } from './report-queue.service.js';
import { ReportRetention } from './report-retention.js';
import { ReportStore } from './report-store.js';
import { ReportsController } from './reports.controller.js';
import { TrafficController } from './traffic.controller.js';

/** Report ingestion (endpoint, queue, workers, retention) and the traffic it records. */
@Module({
  imports: [
    BullModule.registerQueue({ name: REPORT_INGEST_QUEUE }),
    SitesModule,
    SnapshotsModule,
    DetectionModule,
    MetricsModule,
  ],
  controllers: [ReportsController, TrafficController],
  providers: [
    ReportQueueService,
    ReportIngestProcessor,
    ReportStore,
    ReportRetention,
    AddressLabelsService,
  ],
  exports: [ReportStore],
})
export class ReportsModule {}
