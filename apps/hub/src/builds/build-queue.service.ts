/**
 * Asks for snapshot builds. Never lets Redis trouble fail the caller: the change that asked for
 * a build is already committed to the database, and the reconciler re-asks for every site whose
 * rules are ahead of its snapshot, so a build that could not be queued now runs when Redis is back.
 */
import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { traceCarrier } from '../telemetry/job-trace.js';
import { withTimeout } from '../time/with-timeout.js';
import {
  BUILD_SITE_JOB,
  type BuildSiteJobData,
  SNAPSHOT_BUILD_QUEUE,
} from './build-queue.constants.js';

/** How long a caller may wait for Redis to accept a job before moving on. */
const ENQUEUE_TIMEOUT_MS = 1500;

@Injectable()
export class BuildQueueService {
  private readonly logger = new Logger(BuildQueueService.name);

  constructor(
    @InjectQueue(SNAPSHOT_BUILD_QUEUE) private readonly queue: Queue<BuildSiteJobData>,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  /**
   * Enqueues a build of `siteId`, coalesced with any pending one: while a build of the site waits
   * (debounce delay), further requests push its start back; while one runs, at most one more is
   * kept and starts when it ends. Two builds of one site never run at once, on any hub instance.
   * Resolves false when Redis did not take the job (the reconciler will retry).
   *
   * `reschedule: false` leaves a waiting build's start where it is: the reconciler re-asks every
   * few seconds only to make sure a build exists, and pushing the start back each time would
   * postpone it forever whenever it re-asks more often than the debounce delay (short intervals,
   * or several hub instances each reconciling).
   */
  async requestBuild(
    siteId: string,
    delayMs = this.config.buildDebounceMs,
    { reschedule = true }: { reschedule?: boolean } = {},
  ): Promise<boolean> {
    const add = this.queue.add(
      BUILD_SITE_JOB,
      { siteId, trace: traceCarrier() },
      {
        delay: delayMs,
        deduplication: { id: `site:${siteId}`, keepLastIfActive: true, reschedule },
        removeOnComplete: 1000,
        removeOnFail: 1000,
      },
    );
    try {
      await withTimeout(
        add,
        ENQUEUE_TIMEOUT_MS,
        `Redis did not accept the job within ${ENQUEUE_TIMEOUT_MS} ms`,
      );
      return true;
    } catch (error) {
      this.logger.warn(
        `could not queue a build of site ${siteId} (${(error as Error).message}); will retry`,
      );
      return false;
    }
  }
}
