import { Module } from '@nestjs/common';
import { BuildsModule } from '../builds/builds.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { RulesController } from './rules.controller.js';
import { RulesService } from './rules.service.js';

@Module({
  imports: [SitesModule, BuildsModule],
  controllers: [RulesController],
  providers: [RulesService],
  exports: [RulesService],
})
export class RulesModule {}
