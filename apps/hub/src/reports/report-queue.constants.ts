import type { ReportBatch } from './report-batch.js';

/** The BullMQ queue of report ingestion, and its jobs. */
export const REPORT_INGEST_QUEUE = 'report-ingest';
/** One validated batch of one site. */
export const INGEST_BATCH_JOB = 'ingest-batch';
/** The scheduled trim of raw events and old counters (every minute, once across instances). */
export const RETENTION_JOB = 'retention';

export interface IngestBatchJobData {
  readonly siteId: string;
  readonly batch: ReportBatch;
}
