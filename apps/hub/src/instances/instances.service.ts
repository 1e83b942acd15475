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
/**
 * An instance is live when it polled within this long: a blocking poll names its instance every
 * wait (30 s by default), and the last-seen time is written at most every 15 s.
 */
export const LIVE_MS = 90_000;
/** How long a counted fleet size is reused (a count query per poll would be too many). */
const FLEET_TTL_MS = 5000;
const INSTANCE_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
const MAX_TRACKED = 100_000;

@Injectable()
export class InstancesService {
  private readonly lastWrite = new Map<string, { at: number; version: number | null }>();
  private readonly fleets = new Map<string, { at: number; size: Promise<number> }>();

  constructor(private readonly database: DatabaseService) {}

  /**
   * Notes a poll; ignores malformed identities rather than failing the download. Resolves true
   * when the instance joined the fleet (it was not live before): the fleet size changed, and
   * every client should hear it (each enforces its share of fleet-wide limits).
   */
  async seen(
    siteId: string,
    instanceId: string | undefined,
    version: string | undefined,
    userAgent: string | undefined,
  ): Promise<boolean> {
    if (!instanceId || !INSTANCE_ID.test(instanceId)) return false;
    const parsed = version !== undefined && /^\d{1,15}$/.test(version) ? Number(version) : null;
    const key = `${siteId}\u0000${instanceId}`;
    const now = Date.now();
    const last = this.lastWrite.get(key);
    if (last && last.version === parsed && now - last.at < WRITE_EVERY_MS) return false;
    if (this.lastWrite.size >= MAX_TRACKED) this.lastWrite.clear();
    this.lastWrite.set(key, { at: now, version: parsed });
    let joined = false;
    if (!last || now - last.at > LIVE_MS) {
      // Not seen by this hub instance lately: maybe by another one (several behind a balancer).
      const before = await this.database.db
        .selectFrom('instances')
        .select('last_seen')
        .where('site_id', '=', siteId)
        .where('instance_id', '=', instanceId)
        .executeTakeFirst();
      joined = !before || Date.parse(before.last_seen) < now - LIVE_MS;
    }
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
    if (joined) this.fleets.delete(siteId); // counted at once
    return joined;
  }

  /**
   * How many instances of the site are live (polled within {@link LIVE_MS}), at least 1: what
   * each client divides a fleet-wide rate limit by.
   */
  fleetSize(siteId: string, now = Date.now()): Promise<number> {
    const cached = this.fleets.get(siteId);
    if (cached && now - cached.at < FLEET_TTL_MS) return cached.size;
    const size = this.database.db
      .selectFrom('instances')
      .select((e) => e.fn.countAll<number>().as('n'))
      .where('site_id', '=', siteId)
      .where('last_seen', '>=', new Date(now - LIVE_MS).toISOString())
      .executeTakeFirst()
      .then((row) => Math.max(1, Number(row?.n ?? 0)));
    if (this.fleets.size >= MAX_TRACKED) this.fleets.clear();
    this.fleets.set(siteId, { at: now, size });
    size.catch(() => this.fleets.delete(siteId));
    return size;
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
