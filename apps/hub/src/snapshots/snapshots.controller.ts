import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/admin.guard.js';
import { InstancesService, InstanceView } from '../instances/instances.service.js';
import { SitesService } from '../sites/sites.service.js';
import { SnapshotsService, SnapshotVersion } from './snapshots.service.js';

/** What operators see of a site's published snapshots and the instances running them. */
@ApiTags('snapshots')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('v1/sites/:siteId')
export class SnapshotsController {
  constructor(
    private readonly snapshots: SnapshotsService,
    private readonly instances: InstancesService,
    private readonly sites: SitesService,
  ) {}

  @Get('snapshots')
  @ApiOkResponse({ description: 'Retained versions, newest first.' })
  async versions(@Param('siteId') siteId: string): Promise<SnapshotVersion[]> {
    await this.sites.get(siteId);
    return this.snapshots.versions(siteId);
  }

  @Get('instances')
  @ApiOkResponse({ description: 'Client instances that polled, with the version each runs.' })
  async instancesOf(@Param('siteId') siteId: string): Promise<InstanceView[]> {
    await this.sites.get(siteId);
    return this.instances.list(siteId);
  }
}
