import { Module } from '@nestjs/common';
import { BuildsModule } from '../builds/builds.module.js';
import { RulesModule } from '../rules/rules.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { AutomaticBlocksService } from './automatic-blocks.service.js';
import { DetectionController } from './detection.controller.js';
import { DetectionService } from './detection.service.js';
import { DetectionRedis } from './detection-redis.js';
import { DetectionSettingsService } from './detection-settings.service.js';

/** Detectors over ingested reports, their settings, and the automatic blocks they publish. */
@Module({
  imports: [SitesModule, BuildsModule, RulesModule],
  controllers: [DetectionController],
  providers: [DetectionService, DetectionSettingsService, AutomaticBlocksService, DetectionRedis],
  exports: [DetectionService, AutomaticBlocksService],
})
export class DetectionModule {}
