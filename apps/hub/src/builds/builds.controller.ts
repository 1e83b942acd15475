import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/admin.guard.js';
import { SitesService } from '../sites/sites.service.js';
import { BuildQueueService } from './build-queue.service.js';
import { BuildsService, BuildView } from './builds.service.js';

@ApiTags('builds')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('v1/sites/:siteId/builds')
export class BuildsController {
  constructor(
    private readonly builds: BuildsService,
    private readonly queue: BuildQueueService,
    private readonly sites: SitesService,
  ) {}

  @Get()
  @ApiOkResponse({ description: 'Recent builds, newest first, with the error of failed ones.' })
  async list(@Param('siteId') siteId: string): Promise<BuildView[]> {
    await this.sites.get(siteId);
    return this.builds.list(siteId);
  }

  @Post()
  @HttpCode(202)
  @ApiAcceptedResponse({
    description:
      'A build is queued (coalesced with any pending one), also of a revision whose build failed.',
  })
  async request(@Param('siteId') siteId: string): Promise<{ queued: boolean }> {
    await this.sites.get(siteId);
    await this.builds.retry(siteId);
    return { queued: await this.queue.requestBuild(siteId, 0) };
  }
}
