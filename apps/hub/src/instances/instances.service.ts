/**
 * Which client instances (WAF clients, prexy) run which snapshot version, from the identity they
 * send with each poll. Writes are throttled per instance: a fleet polling every few seconds must
 * not turn into a write per poll, but a version change is recorded at once.
 */
import { Injectable } from '@nestjs/common';
import { DatabaseService } from '../database/database.service.js';

export interface InstanceView {
  readonly instanceId: string;
  readonly snapshotVersion: number | null;
  readonly userAgent: string | null;
  readonly lastSeen: string;
}

const WRITE_EVERY_MS = 15_000;
const INSTANCE_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
const MAX_TRACKED = 100_000;

@Injectable()
export class InstancesService {
  private readonly lastWrite = new Map<string, { at: number; version: number | null }>();

  constructor(private readonly database: DatabaseService) {}

  /** Notes a poll; ignores malformed identities rather than failing the download. */
  async seen(
    siteId: string,
    instanceId: string | undefined,
    version: string | undefined,
    userAgent: string | undefined,
  ) {
    if (!instanceId || !INSTANCE_ID.test(instanceId)) return;
    const parsed = version !== undefined && /^\d{1,15}$/.test(version) ? Number(version) : null;
    const key = `${siteId}\u0000${instanceId}`;
    const now = Date.now();
    const last = this.lastWrite.get(key);
    if (last && last.version === parsed && now - last.at < WRITE_EVERY_MS) return;
    if (this.lastWrite.size >= MAX_TRACKED) this.lastWrite.clear();
    this.lastWrite.set(key, { at: now, version: parsed });
    const row = {
      site_id: siteId,
      instance_id: instanceId,
      snapshot_version: parsed,
      user_agent: userAgent?.slice(0, 200) ?? null,
      last_seen: new Date(now).toISOString(),
    };
    await this.database.db
      .insertInto('instances')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['site_id', 'instance_id']).doUpdateSet({
          snapshot_version: row.snapshot_version,
          user_agent: row.user_agent,
          last_seen: row.last_seen,
        }),
      )
      .execute();
  }

  async list(siteId: string): Promise<InstanceView[]> {
    const rows = await this.database.db
      .selectFrom('instances')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('last_seen', 'desc')
      .execute();
    return rows.map((r) => ({
      instanceId: r.instance_id,
      snapshotVersion: r.snapshot_version === null ? null : Number(r.snapshot_version),
      userAgent: r.user_agent,
      lastSeen: r.last_seen,
    }));
  }
}
