import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems } from '../http/problem-details.js';
import { InstancesService, InstanceView } from '../instances/instances.service.js';
import { SitesService } from '../sites/sites.service.js';
import { SnapshotsService, SnapshotVersion } from './snapshots.service.js';

export class SnapshotVersionSchema implements SnapshotVersion {
  @ApiProperty() version!: number;
  @ApiProperty() sha256!: string;
  @ApiProperty() bytes!: number;
  @ApiProperty() rulesRevision!: number;
  @ApiProperty() createdAt!: string;
}

export class InstanceViewSchema implements InstanceView {
  @ApiProperty() instanceId!: string;
  @ApiProperty({ type: 'integer', nullable: true }) snapshotVersion!: number | null;
  @ApiProperty({ type: 'string', nullable: true }) userAgent!: string | null;
  @ApiProperty() lastSeen!: string;
}

/** What operators see of a site's published snapshots and the instances running them. */
@ApiTags('snapshots')
@AdminAuth()
@ApiProblems({ 404: 'No such site.' })
@Controller('v1/sites/:siteId')
export class SnapshotsController {
  constructor(
    private readonly snapshots: SnapshotsService,
    private readonly instances: InstancesService,
    private readonly sites: SitesService,
  ) {}

  @Get('snapshots')
  @ApiOkResponse({ type: [SnapshotVersionSchema], description: 'Retained versions, newest first.' })
  async versions(@Param('siteId') siteId: string): Promise<SnapshotVersion[]> {
    await this.sites.get(siteId);
    return this.snapshots.versions(siteId);
  }

  @Get('instances')
  @ApiOkResponse({
    type: [InstanceViewSchema],
    description: 'Client instances that polled, with the version each runs.',
  })
  async instancesOf(@Param('siteId') siteId: string): Promise<InstanceView[]> {
    await this.sites.get(siteId);
    return this.instances.list(siteId);
  }
}
