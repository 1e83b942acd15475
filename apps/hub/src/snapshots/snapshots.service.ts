import { Injectable, NotFoundException } from '@nestjs/common';
import { DatabaseService } from '../database/database.service.js';

export interface SnapshotVersion {
  readonly version: number;
  readonly sha256: string;
  readonly bytes: number;
  readonly rulesRevision: number;
  readonly createdAt: string;
}

@Injectable()
export class SnapshotsService {
  constructor(private readonly database: DatabaseService) {}

  /** The site's published version with the highest number, or 404 when none was built yet. */
  async current(siteId: string): Promise<SnapshotVersion> {
    const latest = await this.latest(siteId);
    if (!latest) throw new NotFoundException('no snapshot has been published for this site yet');
    return latest;
  }

  /** The site's published version with the highest number, if any. */
  async latest(siteId: string): Promise<SnapshotVersion | undefined> {
    const [latest] = await this.versions(siteId, 1);
    return latest;
  }

  /** A retained version of the site with this content hash, or 404. */
  async byHash(siteId: string, sha256: string): Promise<SnapshotVersion> {
    const version = await this.retained(siteId, sha256);
    if (!version) throw new NotFoundException('no such snapshot');
    return version;
  }

  /** The retained version of the site with this content hash, if the hub still keeps it. */
  async retained(siteId: string, sha256: string): Promise<SnapshotVersion | undefined> {
    const row = await this.database.db
      .selectFrom('snapshots')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('sha256', '=', sha256)
      .orderBy('version', 'desc')
      .executeTakeFirst();
    return row ? toVersion(row) : undefined;
  }

  async versions(siteId: string, limit = 100): Promise<SnapshotVersion[]> {
    const rows = await this.database.db
      .selectFrom('snapshots')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('version', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toVersion);
  }
}

function toVersion(r: {
  version: number;
  sha256: string;
  bytes: number;
  rules_revision: number;
  created_at: string;
}): SnapshotVersion {
  return {
    version: Number(r.version),
    sha256: r.sha256,
    bytes: Number(r.bytes),
    rulesRevision: Number(r.rules_revision),
    createdAt: r.created_at,
  };
}
