import { Module } from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { PublicationChannel } from './publication-channel.js';
import { SnapshotWaits } from './snapshot-waits.js';

/**
 * Publications of new snapshot versions and the blocking polls that wait for them: the builds
 * announce, the distribution endpoints hold.
 */
@Module({
  providers: [
    {
      provide: SnapshotWaits,
      inject: [HUB_CONFIG],
      useFactory: (config: HubConfig) => new SnapshotWaits(config.maxHeldPolls),
    },
    PublicationChannel,
  ],
  exports: [SnapshotWaits, PublicationChannel],
})
export class PublicationsModule {}
