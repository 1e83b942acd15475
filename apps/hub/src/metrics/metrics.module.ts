import { Module } from '@nestjs/common';
import { SnapshotsModule } from '../snapshots/snapshots.module.js';
import { MetricsController } from './metrics.controller.js';

@Module({ imports: [SnapshotsModule], controllers: [MetricsController] })
export class MetricsModule {}
