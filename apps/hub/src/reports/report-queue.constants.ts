import type { ReportBatch } from './report-batch.js';

/** The BullMQ queue of report ingestion, and its jobs. */
export const REPORT_INGEST_QUEUE = 'report-ingest';
/** One validated batch of one site. */
export const INGEST_BATCH_JOB = 'ingest-batch';
/** The scheduled trim of raw events and old counters (every minute, once across instances). */
export const RETENTION_JOB = 'retention';

/** The rebuild of sites whose automatic blocks expired (every few seconds, once across instances). */
export const EXPIRY_SWEEP_JOB = 'expiry-sweep';
export const EXPIRY_SWEEP_EVERY_MS = 5000;

export interface IngestBatchJobData {
  readonly siteId: string;
  readonly batch: ReportBatch;
  /** The W3C trace context of the request that queued the batch (`telemetry/job-trace.ts`). */
  readonly trace?: Record<string, string>;
}
