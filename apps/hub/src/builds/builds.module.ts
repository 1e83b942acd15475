import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { PublicationsModule } from '../publications/publications.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { BuildProcessor } from './build.processor.js';
import { SNAPSHOT_BUILD_QUEUE } from './build-queue.constants.js';
import { BuildQueueService } from './build-queue.service.js';
import { BuildReconciler } from './build-reconciler.js';
import { BuildsController } from './builds.controller.js';
import { BuildsService } from './builds.service.js';
import { SnapshotBuilder } from './snapshot-builder.js';

@Module({
  imports: [
    BullModule.registerQueue({ name: SNAPSHOT_BUILD_QUEUE }),
    SitesModule,
    PublicationsModule,
  ],
  controllers: [BuildsController],
  providers: [BuildQueueService, BuildsService, SnapshotBuilder, BuildProcessor, BuildReconciler],
  exports: [BuildQueueService],
})
export class BuildsModule {}
