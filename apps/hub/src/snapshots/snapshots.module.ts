import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { PublicationsModule } from '../publications/publications.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { DeltaCache } from './delta-cache.js';
import { DistributionController } from './distribution.controller.js';
import { SnapshotCache } from './snapshot-cache.js';
import { SnapshotsController } from './snapshots.controller.js';
import { SnapshotsService } from './snapshots.service.js';

@Module({
  imports: [SitesModule, InstancesModule, PublicationsModule],
  controllers: [DistributionController, SnapshotsController],
  providers: [SnapshotsService, SnapshotCache, DeltaCache],
  exports: [SnapshotsService, SnapshotCache, DeltaCache],
})
export class SnapshotsModule {}
