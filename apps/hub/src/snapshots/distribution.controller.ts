/**
 * Snapshot distribution to WAF clients and prexy instances (site key in `Authorization: Bearer`).
 *
 * Per client (never cached):
 * - `GET /v1/snapshot`: the current version. `ETag` is the content hash; `If-None-Match` with it
 *   answers 304, otherwise the file streams with its hash and version in headers (gzip when
 *   accepted), and `Content-Location` names its immutable URL.
 * - `GET /v1/snapshot/version`: the same question answered in a few hundred bytes of JSON: the
 *   current version, where to get it whole, and, when `If-None-Match` names a version the hub
 *   still keeps, where to get only what changed since (a page delta). What the WAF client uses.
 *
 * Both are blocking polls with `?wait=30s`: when `If-None-Match` names the current version, the
 * request is held (no thread: see `SnapshotWaits`) until the site publishes a newer one, then
 * answered as above, or until the wait ends (304). `X-Rampart-Poll: held` says the hub held it;
 * `busy` that it held too many already and answered at once (the client then waits its own
 * interval).
 *
 * Content-addressed, immutable, cacheable by any CDN for a year:
 * - `GET /v1/snapshots/:sha256`: one retained version.
 * - `GET /v1/snapshots/:sha256/delta/:base`: the page delta from retained version `base` to it.
 *
 * Clients identify themselves with `X-Rampart-Instance` and `X-Rampart-Snapshot-Version` so
 * operators can see which instance runs which version.
 */
import {
  applyDecorators,
  BadRequestException,
  Controller,
  Get,
  Headers,
  Inject,
  Param,
  Query,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  ApiHeader,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentSite, SiteKeyAuth, type SitePrincipal } from '../auth/site-key.guard.js';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { ApiProblems } from '../http/problem-details.js';
import { InstancesService } from '../instances/instances.service.js';
import { PublicationChannel } from '../publications/publication-channel.js';
import { SnapshotWaits } from '../publications/snapshot-waits.js';
import { DeltaCache } from './delta-cache.js';
import { parseWait } from './poll-wait.js';
import { CachedSnapshot, SnapshotCache } from './snapshot-cache.js';
import { SnapshotsService, SnapshotVersion } from './snapshots.service.js';

const SHA256 = /^[0-9a-f]{64}$/;
/**
 * On every distribution answer, errors included: tells a client that this hub holds polls and
 * serves the version lookup, so a 404 without it means a hub (or proxy) from before them.
 */
export const PROTOCOL_HEADER = 'X-Rampart-Protocol';
export const PROTOCOL_VERSION = '2';
/** How many live instances the site has: what each divides a fleet-wide rate limit by. */
export const FLEET_SIZE_HEADER = 'X-Rampart-Fleet-Size';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const PAGE_DELTA_TYPE = 'application/vnd.rampart.page-delta';

export class DeltaLink {
  @ApiProperty({ description: 'The version the delta starts from (the one the client named).' })
  from!: string;

  @ApiProperty({ description: 'Immutable URL of the page delta.' })
  url!: string;
}

export class SnapshotVersionView {
  @ApiProperty()
  version!: number;

  @ApiProperty({ description: 'SHA-256 of the whole file: what a rebuilt file must hash to.' })
  sha256!: string;

  @ApiProperty({ description: 'Size of the whole file.' })
  bytes!: number;

  @ApiProperty({ description: 'Immutable URL of the whole file.' })
  url!: string;

  @ApiProperty({
    description:
      'Live instances of the site (polled within 90 s), at least 1: each enforces its share of a fleet-wide rate limit.',
  })
  fleetSize!: number;

  @ApiPropertyOptional({
    type: DeltaLink,
    nullable: true,
    description: 'Where only what changed can be fetched, when the client named a kept version.',
  })
  delta!: DeltaLink | null;
}

type PollOutcome = 'held' | 'busy' | null;

const header = (description: string) => ({ schema: { type: 'string' as const }, description });
/** What every answer naming a version carries. */
const VERSION_HEADERS = {
  ETag: header('`"<sha256>"` of the version.'),
  'X-Rampart-Snapshot-Version': header('The version number.'),
  'X-Rampart-Snapshot-Sha256': header('SHA-256 of the whole file.'),
};
const POLL_HEADERS = {
  ...VERSION_HEADERS,
  'X-Rampart-Poll': header('`held` when the hub held the poll, `busy` when it held too many.'),
  [FLEET_SIZE_HEADER]: header('Live instances of the site.'),
  [PROTOCOL_HEADER]: header(`\`${PROTOCOL_VERSION}\` (also on errors).`),
};
const binary = (type: string) => ({ [type]: { schema: { type: 'string', format: 'binary' } } });
/** The query and headers of a (blocking) poll; `wait`'s pattern comes from the configuration. */
const Poll = () =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'The ETag the client holds.',
    }),
    ApiHeader({ name: 'X-Rampart-Instance', required: false }),
    ApiHeader({ name: 'X-Rampart-Snapshot-Version', required: false }),
    ApiHeader({
      name: FLEET_SIZE_HEADER,
      required: false,
      description:
        'The live instances the client was told last; another count ends a hold at once.',
    }),
    ApiQuery({
      name: 'wait',
      required: false,
      description: 'Hold until newer, e.g. 30s (at most HUB_MAX_POLL_WAIT_MS).',
    }),
    ApiNotModifiedResponse({
      description: 'The client has the current version (also when a held poll ends).',
      headers: POLL_HEADERS,
    }),
    ApiProblems(
      { 400: '`wait` is not a duration, or is longer than HUB_MAX_POLL_WAIT_MS.' },
      { 404: 'The site has no published version yet.' },
      { 503: 'The hub is shutting down: poll again (`Retry-After`).' },
    ),
  );
const SHA256_PARAM = { type: 'string' as const, pattern: SHA256.source };

@ApiTags('distribution')
@SiteKeyAuth()
@Controller('v1')
export class DistributionController {
  constructor(
    private readonly snapshots: SnapshotsService,
    private readonly cache: SnapshotCache,
    private readonly deltas: DeltaCache,
    private readonly instances: InstancesService,
    private readonly waits: SnapshotWaits,
    private readonly publications: PublicationChannel,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  @Get('snapshot')
  @Poll()
  @ApiOkResponse({
    description: 'The SQLite snapshot file (gzip when accepted).',
    content: binary('application/vnd.sqlite3'),
    headers: { ...POLL_HEADERS, 'Content-Location': header('Its immutable URL.') },
  })
  async current(
    @CurrentSite() site: SitePrincipal,
    @Headers() headers: Record<string, string | undefined>,
    @Query('wait') wait: unknown,
    @Res() response: Response,
  ): Promise<void> {
    const { snapshot, poll } = await this.poll(site, headers, wait, response);
    setPollHeader(response, poll);
    response.setHeader(FLEET_SIZE_HEADER, String(await this.instances.fleetSize(site.siteId)));
    response.setHeader('Cache-Control', 'private, no-cache');
    response.setHeader('Content-Location', `/v1/snapshots/${snapshot.sha256}`);
    await this.send(snapshot, headers, response);
  }

  @Get('snapshot/version')
  @Poll()
  @ApiOkResponse({ type: SnapshotVersionView, headers: POLL_HEADERS })
  async version(
    @CurrentSite() site: SitePrincipal,
    @Headers() headers: Record<string, string | undefined>,
    @Query('wait') wait: unknown,
    @Res() response: Response,
  ): Promise<void> {
    const { snapshot, poll } = await this.poll(site, headers, wait, response);
    setPollHeader(response, poll);
    const fleetSize = await this.instances.fleetSize(site.siteId);
    response.setHeader(FLEET_SIZE_HEADER, String(fleetSize));
    response.setHeader('Cache-Control', 'private, no-cache');
    const etag = describe(snapshot, response);
    if (matchesEtag(headers['if-none-match'], etag)) return void response.status(304).end();
    const base = heldVersion(headers['if-none-match']);
    const kept = base ? await this.snapshots.retained(site.siteId, base) : undefined;
    const body: SnapshotVersionView = {
      version: snapshot.version,
      sha256: snapshot.sha256,
      bytes: snapshot.bytes,
      url: `/v1/snapshots/${snapshot.sha256}`,
      fleetSize,
      delta: kept
        ? { from: kept.sha256, url: `/v1/snapshots/${snapshot.sha256}/delta/${kept.sha256}` }
        : null,
    };
    response.status(200).json(body);
  }

  @Get('snapshots/:sha256')
  @ApiParam({ name: 'sha256', schema: SHA256_PARAM })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag the client holds.' })
  @ApiOkResponse({
    description: 'An immutable snapshot file (gzip when accepted).',
    content: binary('application/vnd.sqlite3'),
    headers: VERSION_HEADERS,
  })
  @ApiNotModifiedResponse({ description: 'The client has this version.', headers: VERSION_HEADERS })
  @ApiProblems(
    { 400: 'The hash is not 64 lower-case hex digits.' },
    { 404: 'The site keeps no such version.' },
  )
  async byHash(
    @CurrentSite() site: SitePrincipal,
    @Param('sha256') sha256: string,
    @Headers() headers: Record<string, string | undefined>,
    @Res() response: Response,
  ): Promise<void> {
    checkSha256('sha256', sha256);
    const snapshot = await this.snapshots.byHash(site.siteId, sha256);
    response.setHeader('Cache-Control', IMMUTABLE);
    await this.send(snapshot, headers, response);
  }

  @Get('snapshots/:sha256/delta/:base')
  @ApiParam({ name: 'sha256', schema: SHA256_PARAM })
  @ApiParam({ name: 'base', schema: SHA256_PARAM })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag the client holds.' })
  @ApiOkResponse({
    description: 'A page delta, immutable (gzip when accepted).',
    content: binary(PAGE_DELTA_TYPE),
    headers: VERSION_HEADERS,
  })
  @ApiNotModifiedResponse({ description: 'The client has this delta.', headers: VERSION_HEADERS })
  @ApiProblems(
    { 400: 'A hash is not 64 lower-case hex digits.' },
    { 404: 'One of the two versions is not kept any more.' },
  )
  async delta(
    @CurrentSite() site: SitePrincipal,
    @Param('sha256') sha256: string,
    @Param('base') base: string,
    @Headers() headers: Record<string, string | undefined>,
    @Res() response: Response,
  ): Promise<void> {
    checkSha256('sha256', sha256);
    checkSha256('base', base);
    const [target] = await Promise.all([
      this.snapshots.byHash(site.siteId, sha256),
      this.snapshots.byHash(site.siteId, base),
    ]);
    const delta = await this.deltas.get(base, sha256);
    const etag = `"${base}>${sha256}"`;
    response.setHeader('ETag', etag);
    response.setHeader('Cache-Control', IMMUTABLE);
    response.setHeader('X-Rampart-Snapshot-Version', String(target.version));
    response.setHeader('X-Rampart-Snapshot-Sha256', target.sha256);
    response.setHeader('Vary', 'Accept-Encoding');
    if (matchesEtag(headers['if-none-match'], etag)) return void response.status(304).end();
    // The delta is kept gzipped: sent as is, or inflated for the rare client without gzip.
    response.status(200);
    response.setHeader('Content-Type', PAGE_DELTA_TYPE);
    if (acceptsGzip(headers['accept-encoding'])) {
      response.setHeader('Content-Encoding', 'gzip');
      response.setHeader('Content-Length', String(delta.gzip.length));
      response.end(delta.gzip);
      return;
    }
    const { gunzipSync } = await import('node:zlib');
    const raw = gunzipSync(delta.gzip);
    response.setHeader('Content-Length', String(raw.length));
    response.end(raw);
  }

  /**
   * The site's current version once the request may be answered: at once, or, with `wait` and an
   * `If-None-Match` naming the current version, when a newer one is published or the wait ends.
   * 404 when the site has no version (after waiting, if asked to); 503 when the hub shuts down
   * during the wait (the client retries, with another instance or this one once it is back).
   */
  private async poll(
    site: SitePrincipal,
    headers: Record<string, string | undefined>,
    rawWait: unknown,
    response: Response,
  ): Promise<{ snapshot: SnapshotVersion; poll: PollOutcome }> {
    response.setHeader(PROTOCOL_HEADER, PROTOCOL_VERSION);
    const waitMs = parseWait(rawWait, this.config.maxPollWaitMs);
    // Recorded before the answer's fleet size is counted, so that an instance counts itself.
    await this.noteInstance(site, headers);
    if (!waitMs) return { snapshot: await this.snapshots.current(site.siteId), poll: null };
    const gone = new AbortController();
    const onClose = () => gone.abort();
    response.once('close', onClose);
    try {
      // Held first, looked at second: a publication in between then ends the hold at once.
      const hold = this.waits.hold(site.siteId, waitMs, gone.signal);
      const before = await this.snapshots.latest(site.siteId);
      if (before && !matchesEtag(headers['if-none-match'], `"${before.sha256}"`)) {
        hold.cancel();
        return { snapshot: before, poll: 'held' };
      }
      // A client that believes in another fleet size hears the right one now, not in 30 s.
      const believed = headers[FLEET_SIZE_HEADER.toLowerCase()];
      if (
        before &&
        believed !== undefined &&
        believed !== String(await this.instances.fleetSize(site.siteId))
      ) {
        hold.cancel();
        return { snapshot: before, poll: 'held' };
      }
      const outcome = await hold.outcome;
      if (outcome === 'closed' && !gone.signal.aborted) {
        response.setHeader('Retry-After', '1');
        throw new ServiceUnavailableException('the hub is shutting down; poll again');
      }
      if (outcome === 'busy' && before) return { snapshot: before, poll: 'busy' };
      return {
        snapshot: await this.snapshots.current(site.siteId),
        poll: outcome === 'busy' ? 'busy' : 'held',
      };
    } finally {
      response.off('close', onClose);
    }
  }

  /**
   * Records the polling instance. One that joins the fleet changes every client's share of a
   * fleet-wide rate limit, so the held polls of the site (on every hub instance) are answered
   * at once, carrying the new `X-Rampart-Fleet-Size`: an instance added under attack lowers the
   * others' shares within a second, not at their next poll.
   */
  private noteInstance(
    site: SitePrincipal,
    headers: Record<string, string | undefined>,
  ): Promise<void> {
    return this.instances
      .seen(
        site.siteId,
        headers['x-rampart-instance'],
        headers['x-rampart-snapshot-version'],
        headers['user-agent'],
      )
      .then((joined) => {
        // Not awaited: the other instances' polls need not delay this one.
        if (joined) void this.publications.announce(site.siteId, 'a new instance');
      })
      .catch(() => undefined); // bookkeeping must never fail a poll
  }

  private async send(
    snapshot: SnapshotVersion,
    headers: Record<string, string | undefined>,
    response: Response,
  ): Promise<void> {
    const etag = describe(snapshot, response);
    if (matchesEtag(headers['if-none-match'], etag)) return void response.status(304).end();
    const cached: CachedSnapshot = await this.cache.get(snapshot.sha256);
    const gzip = acceptsGzip(headers['accept-encoding']);
    const body = gzip ? await cached.gzip() : cached.raw;
    response.status(200);
    response.setHeader('Content-Type', 'application/vnd.sqlite3');
    if (gzip) response.setHeader('Content-Encoding', 'gzip');
    response.setHeader('Content-Length', String(body.length));
    response.end(body);
  }
}

/** Sets the version headers of `snapshot`; returns its ETag. */
function describe(snapshot: SnapshotVersion, response: Response): string {
  const etag = `"${snapshot.sha256}"`;
  response.setHeader('ETag', etag);
  response.setHeader('X-Rampart-Snapshot-Version', String(snapshot.version));
  response.setHeader('X-Rampart-Snapshot-Sha256', snapshot.sha256);
  response.setHeader('Vary', 'Accept-Encoding');
  return etag;
}

function setPollHeader(response: Response, poll: PollOutcome): void {
  if (poll !== null) response.setHeader('X-Rampart-Poll', poll);
  if (poll === 'busy') response.setHeader('Retry-After', '30');
}

function checkSha256(field: string, value: string): void {
  if (!SHA256.test(value)) {
    throw new BadRequestException(`${field} must be 64 lower-case hex digits`);
  }
}

/** The one strong ETag (a hash) in an If-None-Match header, if it names exactly one. */
export function heldVersion(header: string | undefined): string | undefined {
  const tags = header?.split(',').map((t) => t.trim().replace(/^W\//, '')) ?? [];
  const hashes = tags.map((t) => /^"([0-9a-f]{64})"$/.exec(t)?.[1]).filter((h) => h !== undefined);
  return hashes.length === 1 ? hashes[0] : undefined;
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
