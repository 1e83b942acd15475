import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/admin.guard.js';
import { SnapshotCache } from '../snapshots/snapshot-cache.js';

export class MetricsView {
  @ApiProperty({
    description:
      'Snapshot files read from disk since start. Each distinct file is read once, however many clients download it.',
  })
  snapshotFileReads!: number;

  @ApiProperty({ description: 'Snapshot versions held in memory (raw and gzipped).' })
  snapshotCacheEntries!: number;

  @ApiProperty({ description: 'Bytes of raw and gzipped snapshots held in memory.' })
  snapshotCacheBytes!: number;
}

/** Counters of this hub instance (each instance has its own), for operators and tests. */
@ApiTags('metrics')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('v1/metrics')
export class MetricsController {
  constructor(private readonly cache: SnapshotCache) {}

  @Get()
  @ApiOkResponse({ type: MetricsView })
  metrics(): MetricsView {
    const cache = this.cache.stats();
    return {
      snapshotFileReads: cache.fileReads,
      snapshotCacheEntries: cache.entries,
      snapshotCacheBytes: cache.bytes,
    };
  }
}
