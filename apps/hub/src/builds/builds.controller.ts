import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems } from '../http/problem-details.js';
import { SitesService } from '../sites/sites.service.js';
import { BuildQueueService } from './build-queue.service.js';
import { BuildsService, BuildView } from './builds.service.js';

export class BuildViewSchema implements BuildView {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['running', 'succeeded', 'failed'] }) status!: BuildView['status'];
  @ApiProperty() rulesRevision!: number;
  @ApiProperty({ type: 'integer', nullable: true }) version!: number | null;
  @ApiProperty({ type: 'string', nullable: true }) error!: string | null;
  @ApiProperty() hubInstance!: string;
  @ApiProperty() startedAt!: string;
  @ApiProperty({ type: 'string', nullable: true }) finishedAt!: string | null;
}

export class BuildRequestedView {
  @ApiProperty({ description: 'False when a pending build already covers it.' }) queued!: boolean;
}

@ApiTags('builds')
@AdminAuth()
@ApiProblems({ 404: 'No such site.' })
@Controller('v1/sites/:siteId/builds')
export class BuildsController {
  constructor(
    private readonly builds: BuildsService,
    private readonly queue: BuildQueueService,
    private readonly sites: SitesService,
  ) {}

  @Get()
  @ApiOkResponse({
    type: [BuildViewSchema],
    description: 'Recent builds, newest first, with the error of failed ones.',
  })
  async list(@Param('siteId') siteId: string): Promise<BuildView[]> {
    await this.sites.get(siteId);
    return this.builds.list(siteId);
  }

  @Post()
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: BuildRequestedView,
    description:
      'A build is queued (coalesced with any pending one), also of a revision whose build failed.',
  })
  async request(@Param('siteId') siteId: string): Promise<{ queued: boolean }> {
    await this.sites.get(siteId);
    await this.builds.retry(siteId);
    return { queued: await this.queue.requestBuild(siteId, 0) };
  }
}
