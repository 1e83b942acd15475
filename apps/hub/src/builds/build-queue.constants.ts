/** The BullMQ queue of snapshot builds and its one job type. */
export const SNAPSHOT_BUILD_QUEUE = 'snapshot-builds';
export const BUILD_SITE_JOB = 'build-site';

export interface BuildSiteJobData {
  readonly siteId: string;
  /**
   * The W3C trace context of the change that asked for the build (`telemetry/job-trace.ts`).
   * Builds are coalesced, so the build's span links to it rather than continuing it.
   */
  readonly trace?: Record<string, string>;
}
