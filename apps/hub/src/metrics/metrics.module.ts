import { Module } from '@nestjs/common';
import { DashboardModule } from '../dashboard/dashboard.module.js';
import { DetectionModule } from '../detection/detection.module.js';
import { PublicationsModule } from '../publications/publications.module.js';
import { SnapshotsModule } from '../snapshots/snapshots.module.js';
import { MetricsController } from './metrics.controller.js';

@Module({
  imports: [SnapshotsModule, PublicationsModule, DetectionModule, DashboardModule],
  controllers: [MetricsController],
})
export class MetricsModule {}
