/** The BullMQ queue of snapshot builds and its one job type. */
export const SNAPSHOT_BUILD_QUEUE = 'snapshot-builds';
export const BUILD_SITE_JOB = 'build-site';

export interface BuildSiteJobData {
  readonly siteId: string;
}
