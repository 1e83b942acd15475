/**
 * Snapshot distribution to WAF clients and prexy instances (site key in `Authorization: Bearer`).
 *
 * - `GET /v1/snapshot`: the current version. The only request that cannot be cached: `ETag` is
 *   the content hash, `If-None-Match` with it answers 304, otherwise the file streams with its
 *   hash and version in headers (gzip when accepted), and `Content-Location` names its
 *   immutable URL.
 * - `GET /v1/snapshots/:sha256`: one retained version by content hash, immutable and cacheable for
 *   a year by any CDN (the hash is the version; the body can never change).
 *
 * Clients identify themselves with `X-Rampart-Instance` and `X-Rampart-Snapshot-Version` so
 * operators can see which instance runs which version.
 */
import { Controller, Get, Headers, Param, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentSite, SiteKeyGuard, type SitePrincipal } from '../auth/site-key.guard.js';
import { InstancesService } from '../instances/instances.service.js';
import { CachedSnapshot, SnapshotCache } from './snapshot-cache.js';
import { SnapshotsService, SnapshotVersion } from './snapshots.service.js';

const SHA256 = /^[0-9a-f]{64}$/;

@ApiTags('distribution')
@ApiBearerAuth('site-key')
@UseGuards(SiteKeyGuard)
@Controller('v1')
export class DistributionController {
  constructor(
    private readonly snapshots: SnapshotsService,
    private readonly cache: SnapshotCache,
    private readonly instances: InstancesService,
  ) {}

  @Get('snapshot')
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'The ETag (quoted hash) the client holds.',
  })
  @ApiHeader({ name: 'X-Rampart-Instance', required: false })
  @ApiHeader({ name: 'X-Rampart-Snapshot-Version', required: false })
  @ApiOkResponse({ description: 'The SQLite snapshot file.' })
  @ApiNotModifiedResponse({ description: 'The client already has the current version.' })
  async current(
    @CurrentSite() site: SitePrincipal,
    @Headers() headers: Record<string, string | undefined>,
    @Res() response: Response,
  ): Promise<void> {
    void this.instances
      .seen(
        site.siteId,
        headers['x-rampart-instance'],
        headers['x-rampart-snapshot-version'],
        headers['user-agent'],
      )
      .catch(() => undefined); // bookkeeping must never fail a download
    const snapshot = await this.snapshots.current(site.siteId);
    response.setHeader('Cache-Control', 'private, no-cache');
    response.setHeader('Content-Location', `/v1/snapshots/${snapshot.sha256}`);
    await this.send(snapshot, headers, response);
  }

  @Get('snapshots/:sha256')
  @ApiOkResponse({ description: 'An immutable snapshot file.' })
  async byHash(
    @CurrentSite() site: SitePrincipal,
    @Param('sha256') sha256: string,
    @Headers() headers: Record<string, string | undefined>,
    @Res() response: Response,
  ): Promise<void> {
    if (!SHA256.test(sha256)) {
      response
        .status(400)
        .json({ statusCode: 400, message: 'sha256 must be 64 lower-case hex digits' });
      return;
    }
    const snapshot = await this.snapshots.byHash(site.siteId, sha256);
    response.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    await this.send(snapshot, headers, response);
  }

  private async send(
    snapshot: SnapshotVersion,
    headers: Record<string, string | undefined>,
    response: Response,
  ): Promise<void> {
    const etag = `"${snapshot.sha256}"`;
    response.setHeader('ETag', etag);
    response.setHeader('X-Rampart-Snapshot-Version', String(snapshot.version));
    response.setHeader('X-Rampart-Snapshot-Sha256', snapshot.sha256);
    response.setHeader('Vary', 'Accept-Encoding');
    if (matchesEtag(headers['if-none-match'], etag)) {
      response.status(304).end();
      return;
    }
    const cached: CachedSnapshot = await this.cache.get(snapshot.sha256);
    const gzip = acceptsGzip(headers['accept-encoding']);
    const body = gzip ? cached.gzip : cached.raw;
    response.status(200);
    response.setHeader('Content-Type', 'application/vnd.sqlite3');
    if (gzip) response.setHeader('Content-Encoding', 'gzip');
    response.setHeader('Content-Length', String(body.length));
    response.end(body);
  }
}

/** True when an If-None-Match header (a list, or `*`) names `etag` (weak or strong). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const tag = part.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** True when Accept-Encoding allows gzip (q > 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
