/**
 * The counters of this hub instance, read from the services that keep them: what
 * `GET /v1/metrics` answers as JSON and what the Prometheus endpoint exposes (`hub-metrics.ts`).
 */
import { Injectable } from '@nestjs/common';
import { CspReports } from '../dashboard/csp-reports.js';
import { DetectionService } from '../detection/detection.service.js';
import { PublicationChannel } from '../publications/publication-channel.js';
import { SnapshotWaits } from '../publications/snapshot-waits.js';
import { DeltaCache } from '../snapshots/delta-cache.js';
import { SnapshotCache } from '../snapshots/snapshot-cache.js';
import type { MetricsView } from './metrics.controller.js';

@Injectable()
export class HubCounters {
  constructor(
    private readonly cache: SnapshotCache,
    private readonly deltas: DeltaCache,
    private readonly waits: SnapshotWaits,
    private readonly publications: PublicationChannel,
    private readonly detection: DetectionService,
    private readonly cspReports: CspReports,
  ) {}

  read(): MetricsView {
    const cache = this.cache.stats();
    const deltas = this.deltas.stats();
    return {
      snapshotFileReads: cache.fileReads,
      snapshotCacheEntries: cache.entries,
      snapshotCacheBytes: cache.bytes,
      heldPolls: this.waits.count,
      refusedPolls: this.waits.refused,
      wokenPolls: this.waits.woken,
      announcementsReceived: this.publications.received,
      deltasComputed: deltas.computed,
      deltaCacheBytes: deltas.bytes,
      detectedBatches: this.detection.counts.batches,
      detectionFindings: this.detection.counts.findings,
      automaticBlocks: this.detection.counts.blocks,
      detectionFailures: this.detection.counts.failures,
      cspViolationReports: this.cspReports.received,
    };
  }
}
