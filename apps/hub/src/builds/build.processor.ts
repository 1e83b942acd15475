import { performance } from 'node:perf_hooks';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import { inJobSpan } from '../telemetry/job-trace.js';
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
 *
 * Each build runs in a span linked to the change that asked for it, and its duration is
 * recorded by outcome (`rampart_hub_build_duration`, seconds).
 */
@Processor(SNAPSHOT_BUILD_QUEUE, { concurrency: 1 })
export class BuildProcessor extends WorkerHost {
  private readonly logger = new Logger(BuildProcessor.name);
  private readonly duration = metrics
    .getMeter('@rampart/hub')
    .createHistogram('rampart.hub.build.duration', {
      description: 'Snapshot builds, by outcome.',
      unit: 's',
    });

  constructor(private readonly builds: BuildsService) {
    super();
  }

  async process(job: Job<BuildSiteJobData>): Promise<BuildOutcome> {
    switch (job.name) {
      case BUILD_SITE_JOB:
        return inJobSpan(
          {
            queue: SNAPSHOT_BUILD_QUEUE,
            job: job.name,
            jobId: job.id,
            carrier: job.data.trace,
            relation: 'link',
            attributes: { 'rampart.site.id': job.data.siteId },
          },
          async (span) => {
            const started = performance.now();
            const outcome = await this.builds.build(job.data.siteId);
            span.setAttribute('rampart.build.outcome', outcome.status);
            this.duration.record((performance.now() - started) / 1000, {
              outcome: outcome.status,
            });
            return outcome;
          },
        );
      default:
        this.logger.error(`unknown job ${job.name} on ${SNAPSHOT_BUILD_QUEUE}`);
        throw new Error(`unknown job ${job.name}`);
    }
  }
}
