/**
 * Range datasets (country, ASN, reputation lists) shared by every site's snapshot builds.
 *
 * An upload is streamed to a scratch file (never buffered whole), checked with the same importer
 * the builds use, then published under its SHA-256 and recorded; only then do sites rebuild. A
 * rejected upload leaves the previous dataset of that name in place.
 */

import { randomUUID } from 'node:crypto';
import {
  ConflictException,
  Inject,
  Injectable,
  NotFoundException,
  PayloadTooLargeException,
  UnprocessableEntityException,
} from '@nestjs/common';
import type { Selectable } from 'kysely';
import { BuildQueueService } from '../builds/build-queue.service.js';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { DatasetKind, DatasetsTable } from '../database/schema.js';
import { DataDir } from '../storage/data-dir.js';
import { runWorker } from '../workers/run-worker.js';
import { CheckInput, CheckMessage } from './dataset-check-io.js';
import { streamToFile, UploadTooLargeError } from './upload.js';

export interface DatasetView {
  readonly kind: DatasetKind;
  readonly name: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly entries: number;
  readonly lines: number;
  readonly skippedLines: number;
  readonly createdAt: string;
}

export interface UploadResult extends DatasetView {
  /** The first skipped lines (file, line, reason) when bad lines were skipped. */
  readonly issues: readonly { file: string; line: number; reason: string }[];
}

@Injectable()
export class DatasetsService {
  constructor(
    private readonly database: DatabaseService,
    private readonly dataDir: DataDir,
    private readonly queue: BuildQueueService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  async upload(
    kind: DatasetKind,
    name: string,
    body: NodeJS.ReadableStream,
    onBadLine: 'skip' | 'reject',
  ): Promise<UploadResult> {
    const scratch = this.dataDir.temporaryPath('.upload');
    try {
      const stored = await streamToFile(body, scratch, this.config.maxUploadBytes).catch(
        (error: unknown) => {
          if (error instanceof UploadTooLargeError)
            throw new PayloadTooLargeException(error.message);
          throw error;
        },
      );
      const check = await runWorker<CheckMessage>(
        new URL('./dataset-check.worker.js', import.meta.url),
        {
          kind,
          name,
          path: scratch,
          onBadLine,
        } satisfies CheckInput,
      );
      if (!check.ok) {
        throw new UnprocessableEntityException({
          statusCode: 422,
          error: 'Unprocessable Entity',
          message: check.message,
          issueCount: check.issueCount,
          // Each a line of the body: `file` and `line` say which.
          issues: check.issues.map((issue) => ({ field: '(body)', ...issue })),
        });
      }
      if (check.entries === 0) {
        throw new UnprocessableEntityException(`the ${kind} dataset "${name}" has no usable line`);
      }
      await this.dataDir.publish(scratch, this.dataDir.datasetPath(stored.sha256));
      const view = await this.record(kind, name, stored, check);
      await this.rebuildAll();
      return { ...view, issues: check.issues };
    } finally {
      await this.dataDir.discard(scratch);
    }
  }

  async list(): Promise<DatasetView[]> {
    const rows = await this.database.db
      .selectFrom('datasets')
      .selectAll()
      .orderBy('kind')
      .orderBy('name')
      .execute();
    return rows.map(toView);
  }

  async remove(kind: DatasetKind, name: string): Promise<void> {
    const db = this.database.db;
    const row = await db
      .selectFrom('datasets')
      .selectAll()
      .where('kind', '=', kind)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw new NotFoundException(`there is no ${kind} dataset "${name}"`);
    if (kind === 'reputation') {
      const users = await this.sitesUsingList(name);
      if (users.length > 0) {
        throw new ConflictException(
          `reputation list "${name}" is used by rules of: ${users.join(', ')}`,
        );
      }
    }
    await db.deleteFrom('datasets').where('id', '=', row.id).execute();
    await this.discardIfUnused(row.sha256);
    await this.rebuildAll();
  }

  private async record(
    kind: DatasetKind,
    name: string,
    stored: { bytes: number; sha256: string },
    check: Extract<CheckMessage, { ok: true }>,
  ): Promise<DatasetView> {
    const now = new Date().toISOString();
    const previous = await this.database.db.transaction().execute(async (tx) => {
      const old = await tx
        .selectFrom('datasets')
        .select(['id', 'sha256'])
        .where('kind', '=', kind)
        .where('name', '=', name)
        .executeTakeFirst();
      if (old) await tx.deleteFrom('datasets').where('id', '=', old.id).execute();
      await tx
        .insertInto('datasets')
        .values({
          id: randomUUID(),
          kind,
          name,
          sha256: stored.sha256,
          bytes: stored.bytes,
          entries: check.entries,
          lines: check.lines,
          skipped_lines: check.skippedLines,
          created_at: now,
        })
        .execute();
      return old;
    });
    if (previous && previous.sha256 !== stored.sha256) await this.discardIfUnused(previous.sha256);
    return {
      kind,
      name,
      sha256: stored.sha256,
      bytes: stored.bytes,
      entries: check.entries,
      lines: check.lines,
      skippedLines: check.skippedLines,
      createdAt: now,
    };
  }

  private async discardIfUnused(sha256: string): Promise<void> {
    const used = await this.database.db
      .selectFrom('datasets')
      .select('id')
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    if (!used) await this.dataDir.discard(this.dataDir.datasetPath(sha256));
  }

  /** Datasets feed every site's snapshot: bump every revision, then ask for builds. */
  private async rebuildAll(): Promise<void> {
    const db = this.database.db;
    await db
      .updateTable('sites')
      .set((eb) => ({ rules_revision: eb('rules_revision', '+', 1) }))
      .execute();
    const sites = await db.selectFrom('sites').select('id').execute();
    // Concurrently: with Redis down each request waits for its timeout, and the reconciler
    // queues whatever did not get through.
    await Promise.all(sites.map(({ id }) => this.queue.requestBuild(id)));
  }

  private async sitesUsingList(name: string): Promise<string[]> {
    const rows = await this.database.db
      .selectFrom('rules')
      .select(['site_id', 'body'])
      .where('body', 'like', '%"type":"reputation"%')
      .execute();
    const sites = rows
      .filter((r) => ((JSON.parse(r.body) as { lists?: string[] }).lists ?? []).includes(name))
      .map((r) => r.site_id);
    return [...new Set(sites)];
  }
}

function toView(r: Selectable<DatasetsTable>): DatasetView {
  return {
    kind: r.kind,
    name: r.name,
    sha256: r.sha256,
    bytes: Number(r.bytes),
    entries: Number(r.entries),
    lines: Number(r.lines),
    skippedLines: Number(r.skipped_lines),
    createdAt: r.created_at,
  };
}
