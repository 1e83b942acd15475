import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { DistributionController } from './distribution.controller.js';
import { SnapshotCache } from './snapshot-cache.js';
import { SnapshotsController } from './snapshots.controller.js';
import { SnapshotsService } from './snapshots.service.js';

@Module({
  imports: [SitesModule, InstancesModule],
  controllers: [DistributionController, SnapshotsController],
  providers: [SnapshotsService, SnapshotCache],
  exports: [SnapshotCache],
})
export class SnapshotsModule {}
