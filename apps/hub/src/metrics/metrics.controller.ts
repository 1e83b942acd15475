import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../auth/admin.guard.js';
import { HubCounters } from './hub-counters.service.js';

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

  @ApiProperty({ description: 'Blocking polls held by this instance right now.' })
  heldPolls!: number;

  @ApiProperty({ description: 'Blocking polls answered at once because the bound was reached.' })
  refusedPolls!: number;

  @ApiProperty({ description: 'Held polls ended by a publication since start.' })
  wokenPolls!: number;

  @ApiProperty({ description: 'Publications announced by other hub instances, received.' })
  announcementsReceived!: number;

  @ApiProperty({ description: 'Page deltas computed since start (each pair once).' })
  deltasComputed!: number;

  @ApiProperty({ description: 'Bytes of gzipped page deltas held in memory.' })
  deltaCacheBytes!: number;

  @ApiProperty({ description: 'Report batches this instance ran the detectors over.' })
  detectedBatches!: number;

  @ApiProperty({ description: 'Findings of the detectors, and automatic blocks they created.' })
  detectionFindings!: number;

  @ApiProperty() automaticBlocks!: number;

  @ApiProperty({ description: 'Batches the detectors skipped because Redis failed.' })
  detectionFailures!: number;

  @ApiProperty({
    description: "Content-Security-Policy violations the dashboard's pages reported since start.",
  })
  cspViolationReports!: number;
}

/** Counters of this hub instance (each instance has its own), for operators and tests. */
@ApiTags('metrics')
@AdminAuth()
@Controller('v1/metrics')
export class MetricsController {
  constructor(private readonly counters: HubCounters) {}

  @Get()
  @ApiOkResponse({ type: MetricsView })
  metrics(): MetricsView {
    return this.counters.read();
  }
}
