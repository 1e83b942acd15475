/**
 * Puts validated report batches on the ingestion queue, durably (Redis), and says when the queue
 * is too deep to take more: the endpoint then answers 503 with `Retry-After`, which the client
 * honours, instead of letting a flood of reports grow Redis without bound.
 *
 * Jobs are keyed by site and batch id, so a batch the client retried while the first copy still
 * waits in the queue is queued once; the store's batch table catches later copies.
 */
import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { traceCarrier } from '../telemetry/job-trace.js';
import { withTimeout } from '../time/with-timeout.js';
import type { ReportBatch } from './report-batch.js';
import {
  EXPIRY_SWEEP_EVERY_MS,
  EXPIRY_SWEEP_JOB,
  INGEST_BATCH_JOB,
  type IngestBatchJobData,
  REPORT_INGEST_QUEUE,
  RETENTION_JOB,
} from './report-queue.constants.js';

const ENQUEUE_TIMEOUT_MS = 2000;
/** How long a measured queue depth is trusted (one Redis round trip per batch is too many). */
const DEPTH_TTL_MS = 250;

export type Enqueued = 'queued' | 'full' | 'unavailable';

@Injectable()
export class ReportQueueService implements OnModuleInit {
  private readonly logger = new Logger(ReportQueueService.name);
  private depth = 0;
  private depthAt = 0;

  constructor(
    @InjectQueue(REPORT_INGEST_QUEUE) private readonly queue: Queue<IngestBatchJobData>,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    // One schedule across every hub instance (BullMQ keeps it in Redis under this id).
    await withTimeout(
      this.queue.upsertJobScheduler(
        RETENTION_JOB,
        { every: this.config.retentionIntervalMs },
        { name: RETENTION_JOB },
      ),
      ENQUEUE_TIMEOUT_MS,
      'Redis did not accept the retention schedule',
    ).catch(() => undefined); // Redis down at start: the next hub start schedules it
    await withTimeout(
      this.queue.upsertJobScheduler(
        EXPIRY_SWEEP_JOB,
        { every: EXPIRY_SWEEP_EVERY_MS },
        { name: EXPIRY_SWEEP_JOB },
      ),
      ENQUEUE_TIMEOUT_MS,
      'Redis did not accept the expiry sweep schedule',
    ).catch(() => undefined);
  }

  /** Queues `batch` of `siteId`; `full` past `HUB_REPORT_QUEUE_MAX` waiting batches. */
  async enqueue(siteId: string, batch: ReportBatch): Promise<Enqueued> {
    try {
      if (Date.now() - this.depthAt > DEPTH_TTL_MS) {
        this.depth = await withTimeout(
          this.queue.getWaitingCount(),
          ENQUEUE_TIMEOUT_MS,
          'no answer',
        );
        this.depthAt = Date.now();
      }
      if (this.depth >= this.config.reportQueueMax) return 'full';
      await withTimeout(
        this.queue.add(
          INGEST_BATCH_JOB,
          { siteId, batch, trace: traceCarrier() },
          {
            jobId: `${siteId}.${batch.batchId}`, // BullMQ refuses ':' in ids
            removeOnComplete: true,
            removeOnFail: 1000,
            attempts: 5,
            backoff: { type: 'exponential', delay: 1000 },
          },
        ),
        ENQUEUE_TIMEOUT_MS,
        `Redis did not accept the batch within ${ENQUEUE_TIMEOUT_MS} ms`,
      );
      this.depth++;
      return 'queued';
    } catch (error) {
      this.logger.warn(
        `could not queue a report batch of site ${siteId}: ${(error as Error).message}`,
      );
      return 'unavailable';
    }
  }
}
