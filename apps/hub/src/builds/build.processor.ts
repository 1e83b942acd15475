import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import {
  BUILD_SITE_JOB,
  type BuildSiteJobData,
  SNAPSHOT_BUILD_QUEUE,
} from './build-queue.constants.js';
import { BuildOutcome, BuildsService } from './builds.service.js';

/**
 * Runs queued snapshot builds. One at a time per hub instance (builds are CPU-bound and run on a
 * worker thread); the queue's deduplication keeps builds of one site from overlapping across
 * instances. A failed build is recorded by BuildsService and not retried by BullMQ: retrying the
 * same rules would fail the same way; the next change queues a new build.
 */
@Processor(SNAPSHOT_BUILD_QUEUE, { concurrency: 1 })
export class BuildProcessor extends WorkerHost {
  private readonly logger = new Logger(BuildProcessor.name);

  constructor(private readonly builds: BuildsService) {
    super();
  }

  async process(job: Job<BuildSiteJobData>): Promise<BuildOutcome> {
    switch (job.name) {
      case BUILD_SITE_JOB:
        return this.builds.build(job.data.siteId);
      default:
        this.logger.error(`unknown job ${job.name} on ${SNAPSHOT_BUILD_QUEUE}`);
        throw new Error(`unknown job ${job.name}`);
    }
  }
}
