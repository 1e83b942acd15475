import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bullmq';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { AutomaticBlocksService } from '../detection/automatic-blocks.service.js';
import { DetectionService } from '../detection/detection.service.js';
import { HubMetrics } from '../metrics/hub-metrics.js';
import { inJobSpan, inStepSpan, linkFromTraceparent } from '../telemetry/job-trace.js';
import { AddressLabelsService } from './address-labels.js';
import {
  EXPIRY_SWEEP_JOB,
  INGEST_BATCH_JOB,
  type IngestBatchJobData,
  REPORT_INGEST_QUEUE,
  RETENTION_JOB,
} from './report-queue.constants.js';
import { ReportRetention } from './report-retention.js';
import { ReportStore } from './report-store.js';

/**
 * Ingests queued report batches: labels each event's address with the country and AS of the
 * site's datasets, writes the batch (once: see `ReportStore.ingest`), then hands it to the
 * detectors. A failure (the database away) is retried by BullMQ with backoff; the batch stays in
 * Redis meanwhile. Each batch is processed in a span continuing the trace of the client's
 * report flush (its context travels in the job), linked to the traces of the requests its
 * events describe. Concurrency per instance: `HUB_INGEST_CONCURRENCY` (set on the worker at start).
 */
@Processor(REPORT_INGEST_QUEUE)
export class ReportIngestProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(ReportIngestProcessor.name);

  constructor(
    private readonly store: ReportStore,
    private readonly labels: AddressLabelsService,
    private readonly retention: ReportRetention,
    private readonly detection: DetectionService,
    private readonly blocks: AutomaticBlocksService,
    private readonly metrics: HubMetrics,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.ingestConcurrency;
  }

  /** A batch that failed is retried with backoff; each failure is worth a line in the log. */
  @OnWorkerEvent('failed')
  onFailed(job: Job<IngestBatchJobData> | undefined, error: Error): void {
    const what = job?.name === INGEST_BATCH_JOB ? `batch of site ${job.data.siteId}` : job?.name;
    this.logger.warn(
      `ingesting ${what} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`,
    );
  }

  async process(job: Job<IngestBatchJobData>): Promise<boolean | number> {
    switch (job.name) {
      case INGEST_BATCH_JOB: {
        const { siteId, batch, trace } = job.data;
        return inJobSpan(
          {
            queue: REPORT_INGEST_QUEUE,
            job: job.name,
            jobId: job.id,
            carrier: trace,
            relation: 'parent',
            links: batch.events.flatMap((e) => linkFromTraceparent(e.traceparent) ?? []),
            attributes: {
              'rampart.site.id': siteId,
              'rampart.report.batch_id': batch.batchId,
              'rampart.report.events': batch.events.length,
              'rampart.report.signals': batch.signals.length,
              'rampart.job.attempt': job.attemptsMade + 1,
            },
          },
          async (span) => {
            const label = await this.labels.labelerFor(siteId);
            const stored = await this.store.ingest(siteId, batch, label);
            span.setAttribute('rampart.report.stored', stored);
            this.metrics.ingested(batch, stored);
            if (stored)
              await inStepSpan('rampart.detection.inspect', { 'rampart.site.id': siteId }, () =>
                this.detection.inspect(siteId, batch, label),
              );
            return stored;
          },
        );
      }
      case RETENTION_JOB:
        return this.retention.trim();
      case EXPIRY_SWEEP_JOB:
        return this.blocks.sweepExpired();
      default:
        this.logger.error(`unknown job ${job.name} on ${REPORT_INGEST_QUEUE}`);
        throw new Error(`unknown job ${job.name}`);
    }
  }
}
