import { Module } from '@nestjs/common';
import { BuildsModule } from '../builds/builds.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { ProxyConfigController } from './proxy-config.controller.js';
import { ProxyConfigService } from './proxy-config.service.js';

/** Each site's prexy configuration: the API, and what snapshot builds write. */
@Module({
  imports: [SitesModule, BuildsModule],
  controllers: [ProxyConfigController],
  providers: [ProxyConfigService],
})
export class ProxyConfigModule {}
