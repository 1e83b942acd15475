/**
 * One snapshot build of one site, from its rules and the datasets to a published version.
 *
 * The contract: a new version is visible (in the database, hence to clients) only after its file
 * is complete and in place under its SHA-256; a failed build leaves the previous version
 * published and records why. Versions increase by one per successful build of a site.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { BuildsTable } from '../database/schema.js';
import { activeAutomaticRules } from '../detection/automatic-blocks.service.js';
import { storedProxyConfigDocument } from '../proxy-config/stored-proxy-config.js';
import { PublicationChannel } from '../publications/publication-channel.js';
import { SitesService } from '../sites/sites.service.js';
import { DataDir } from '../storage/data-dir.js';
import { BuildQueueService } from './build-queue.service.js';
import { SnapshotBuilder } from './snapshot-builder.js';

export type BuildOutcome =
  | { readonly status: 'up-to-date' }
  | { readonly status: 'succeeded'; readonly version: number; readonly sha256: string }
  | { readonly status: 'failed'; readonly error: string };

export interface BuildView {
  readonly id: string;
  readonly status: BuildsTable['status'];
  readonly rulesRevision: number;
  readonly version: number | null;
  readonly error: string | null;
  readonly hubInstance: string;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

@Injectable()
export class BuildsService {
  private readonly logger = new Logger(BuildsService.name);
  readonly hubInstance = `${hostname()}:${process.pid}`;

  constructor(
    private readonly database: DatabaseService,
    private readonly dataDir: DataDir,
    private readonly builder: SnapshotBuilder,
    private readonly queue: BuildQueueService,
    private readonly publications: PublicationChannel,
    private readonly sites: SitesService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  /**
   * Builds `siteId` if its rules are ahead of its snapshot and this revision has not failed
   * already: a build request that was queued while the failing build ran (the reconciler, a
   * dataset change of another site) must not fail it again. A new change, or an operator's
   * {@link retry}, builds it again.
   */
  async build(siteId: string): Promise<BuildOutcome> {
    const db = this.database.db;
    const site = await db
      .selectFrom('sites')
      .selectAll()
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (!site) return { status: 'up-to-date' }; // deleted meanwhile
    const revision = Number(site.rules_revision);
    if (Number(site.built_revision) >= revision) return { status: 'up-to-date' };
    if (Number(site.failed_revision) >= revision) return { status: 'up-to-date' };
    const buildId = randomUUID();
    const startedAt = new Date().toISOString();
    await db
      .insertInto('builds')
      .values({
        id: buildId,
        site_id: siteId,
        status: 'running',
        rules_revision: revision,
        version: null,
        error: null,
        hub_instance: this.hubInstance,
        started_at: startedAt,
        finished_at: null,
      })
      .execute();
    const outcome = await this.buildAndPublish(siteId, revision, buildId).catch(
      (error: unknown): BuildOutcome => ({
        status: 'failed',
        error: (error as Error).message ?? String(error),
      }),
    );
    if (outcome.status === 'failed') await this.recordFailure(buildId, siteId, revision, outcome);
    else await this.applyRetention(siteId);
    // Edits that arrived during the build need another one.
    const now = await db
      .selectFrom('sites')
      .select('rules_revision')
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (now && Number(now.rules_revision) > revision) await this.queue.requestBuild(siteId);
    return outcome;
  }

  /**
   * Builds and publishes the snapshot of `revision`. The snapshot row, the site's built revision
   * and the build's `succeeded` status commit together, so no reader sees a published version
   * whose build still says `running`.
   */
  private async buildAndPublish(
    siteId: string,
    revision: number,
    buildId: string,
  ): Promise<BuildOutcome> {
    const db = this.database.db;
    const rules = await db
      .selectFrom('rules')
      .select('body')
      .where('site_id', '=', siteId)
      .orderBy('position')
      .execute();
    // The site's own rules, then its standing automatic blocks (expired ones drop out here).
    const parsed = [
      ...rules.map((r) => JSON.parse(r.body) as { type?: string; lists?: string[] }),
      ...(await activeAutomaticRules(this.database, siteId)),
    ];
    const wantedLists = new Set(
      parsed.flatMap((r) => (r.type === 'reputation' ? (r.lists ?? []) : [])),
    );
    const datasets = (
      await db.selectFrom('datasets').selectAll().orderBy('created_at').execute()
    ).filter((d) => d.kind !== 'reputation' || wantedLists.has(d.name));
    const latest = await db
      .selectFrom('snapshots')
      .select((e) => e.fn.max('version').as('version'))
      .where('site_id', '=', siteId)
      .executeTakeFirst();
    const version = Number(latest?.version ?? 0) + 1;
    const proxyConfig = await storedProxyConfigDocument(db, siteId);
    const outPath = this.dataDir.temporaryPath('.sqlite');
    try {
      const output = await this.builder.build({
        rules: parsed,
        datasets: datasets.map((d) => ({
          kind: d.kind,
          name: d.name,
          sha256: d.sha256,
          path: this.dataDir.datasetPath(d.sha256),
        })),
        version,
        outPath,
        signalKey: await this.sites.signalKey(siteId),
        ...(proxyConfig === null ? {} : { proxyConfig }),
      });
      await this.dataDir.publish(outPath, this.dataDir.snapshotPath(output.sha256));
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('snapshots')
          .values({
            site_id: siteId,
            version,
            sha256: output.sha256,
            bytes: output.bytes,
            rules_revision: revision,
            created_at: new Date().toISOString(),
          })
          .execute();
        await tx
          .updateTable('sites')
          .set({ built_revision: revision })
          .where('id', '=', siteId)
          .where('built_revision', '<', revision)
          .execute();
        await tx
          .updateTable('builds')
          .set({
            status: 'succeeded',
            version,
            error: null,
            finished_at: new Date().toISOString(),
          })
          .where('id', '=', buildId)
          .execute();
      });
      this.logger.log(
        `site ${siteId}: published snapshot version ${version} (${output.bytes} bytes)`,
      );
      // Committed: the polls held for this site, on every hub instance, can be answered now.
      await this.publications.announce(siteId, `version ${version}`);
      return { status: 'succeeded', version, sha256: output.sha256 };
    } finally {
      await this.dataDir.discard(outPath);
    }
  }

  private async recordFailure(
    buildId: string,
    siteId: string,
    revision: number,
    outcome: Extract<BuildOutcome, { status: 'failed' }>,
  ): Promise<void> {
    this.logger.warn(`site ${siteId}: build of revision ${revision} failed: ${outcome.error}`);
    // As for a success: the site's failed revision and the build's status commit together.
    await this.database.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('sites')
        .set({ failed_revision: revision })
        .where('id', '=', siteId)
        .where('failed_revision', '<', revision)
        .execute();
      await tx
        .updateTable('builds')
        .set({
          status: 'failed',
          version: null,
          error: outcome.error,
          finished_at: new Date().toISOString(),
        })
        .where('id', '=', buildId)
        .execute();
    });
  }

  /** Keeps the newest `snapshotRetention` versions of the site; removes files nobody references. */
  private async applyRetention(siteId: string): Promise<void> {
    const db = this.database.db;
    const expired = await db
      .selectFrom('snapshots')
      .select(['version', 'sha256'])
      .where('site_id', '=', siteId)
      .orderBy('version', 'desc')
      .offset(this.config.snapshotRetention)
      .limit(1_000_000)
      .execute();
    for (const { version, sha256 } of expired) {
      await db
        .deleteFrom('snapshots')
        .where('site_id', '=', siteId)
        .where('version', '=', version)
        .execute();
      const still = await db
        .selectFrom('snapshots')
        .select('site_id')
        .where('sha256', '=', sha256)
        .executeTakeFirst();
      if (!still) await this.dataDir.discard(this.dataDir.snapshotPath(sha256));
    }
  }

  /** An operator asks for a build: forget that the current revision failed, so it is tried again. */
  async retry(siteId: string): Promise<void> {
    await this.database.db
      .updateTable('sites')
      .set({ failed_revision: 0 })
      .where('id', '=', siteId)
      .execute();
  }

  async list(siteId: string, limit = 50): Promise<BuildView[]> {
    const rows = await this.database.db
      .selectFrom('builds')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('started_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      status: r.status,
      rulesRevision: Number(r.rules_revision),
      version: r.version === null ? null : Number(r.version),
      error: r.error,
      hubInstance: r.hub_instance,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
    }));
  }
}
