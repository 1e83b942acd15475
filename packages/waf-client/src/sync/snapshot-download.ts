/**
 * One poll of the hub, run on the poll worker's thread (`poll-worker.ts`).
 *
 * The version lookup (`GET /v1/snapshot/version`, the default): the site key in `Authorization`,
 * the snapshot we hold in `If-None-Match`, our identity in `X-Rampart-Instance` /
 * `X-Rampart-Snapshot-Version`, and with `waitMs` a blocking poll (`?wait=`) that the hub holds
 * until it publishes a newer version or the wait ends.
 * - 304: nothing new (`poll` says whether the hub held the request, or was too busy to).
 * - 200: a few hundred bytes naming the new version. If the data directory has its file already
 *   (another process of this host fetched it), nothing is downloaded. Else, when the hub offers
 *   a page delta from the snapshot we hold, it is fetched and applied to our file, and the
 *   rebuilt file must have the announced SHA-256, as a download must; any failure of that falls
 *   back to the whole file at its immutable URL. A truncated, padded or garbled body therefore
 *   never leaves this module as a file.
 * - A 404 without the hub's protocol header: a hub from before the lookup; the caller polls
 *   `GET /v1/snapshot` instead (`lookup: false`), which answers with the whole file.
 * - 401/403: the key was refused; the caller stops syncing.
 * - anything else, a network error, or no byte for `idleTimeoutMs` (after the wait):
 *   {@link DownloadError}.
 *
 * Redirects are refused: following one could send the key to another origin.
 */
import { createHash } from 'node:crypto';
import { open, readFile, unlink } from 'node:fs/promises';
import { applyPageDelta } from '@rampart/rules-core/snapshot/page-delta';
import { isSha256, type SnapshotStore } from './snapshot-store.js';

/** Larger bodies are refused (a snapshot of every public dataset is well below 1 GiB). */
const MAX_SNAPSHOT_BYTES = 1 << 30;
/** The header a hub that holds polls and serves deltas puts on every distribution answer. */
export const PROTOCOL_HEADER = 'x-rampart-protocol';

/** What the hub said about holding the request: `held`, `busy`, or nothing (it did not hold). */
export type PollMarker = 'held' | 'busy' | 'none';

/** Live instances of the site, as the hub said (`X-Rampart-Fleet-Size`); null when it did not. */
export type FleetSize = number | null;

export type PollResult =
  | { readonly kind: 'not_modified'; readonly poll: PollMarker; readonly fleetSize: FleetSize }
  | { readonly kind: 'unauthorized'; readonly status: number }
  /** The hub does not know the version lookup: poll `GET /v1/snapshot`. */
  | { readonly kind: 'no_lookup' }
  /** Verified bytes in `tempPath` (the caller owns the file). */
  | {
      readonly kind: 'downloaded';
      readonly sha256: string;
      readonly version: number;
      readonly tempPath: string;
      /** Bytes received over the wire (compressed, when the hub compressed them). */
      readonly bytes: number;
      readonly via: 'full' | 'delta';
      /** Why a delta offered was not used, when it was not. */
      readonly deltaError: string | null;
      readonly poll: PollMarker;
      readonly fleetSize: FleetSize;
    }
  /** The hub's current file is already in the data directory. */
  | {
      readonly kind: 'present';
      readonly sha256: string;
      readonly version: number;
      readonly poll: PollMarker;
      readonly fleetSize: FleetSize;
    };

export class DownloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DownloadError';
  }
}

export interface PollRequest {
  readonly hubUrl: string;
  readonly siteKey: string;
  readonly instanceId: string;
  /** The snapshot in use, if any. */
  readonly current: { readonly sha256: string; readonly version: number } | null;
  /** Longest silence from the hub once it answers (and before, beyond `waitMs`). */
  readonly idleTimeoutMs: number;
  readonly userAgent: string;
  /** How long the hub may hold the poll (`?wait=`); 0 asks for an answer at once. */
  readonly waitMs: number;
  /** The version lookup (default); false polls `GET /v1/snapshot`, for hubs without it. */
  readonly lookup: boolean;
  /** Whether a page delta the hub offers is used. */
  readonly deltas: boolean;
  /**
   * The fleet size the hub said last (sent as `X-Rampart-Fleet-Size`): a hub that counts another
   * answers a blocking poll at once instead of holding it. Null before the first answer.
   */
  readonly fleetSize: FleetSize;
  /** Aborts the poll (client shutting down). */
  readonly signal: AbortSignal;
}

/** The lookup's answer, as the hub's `SnapshotVersionView` documents it. */
interface VersionAnswer {
  readonly version: number;
  readonly sha256: string;
  readonly url: string;
  readonly delta: { readonly from: string; readonly url: string } | null;
}

const MAX_LOOKUP_BYTES = 64 * 1024;

export async function pollHub(request: PollRequest, store: SnapshotStore): Promise<PollResult> {
  const exchange = new Exchange(request);
  try {
    return request.lookup
      ? await lookUp(request, store, exchange)
      : await pollWhole(request, store, exchange);
  } finally {
    exchange.end();
  }
}

/** `GET /v1/snapshot`: the whole file whenever anything changed. */
async function pollWhole(
  request: PollRequest,
  store: SnapshotStore,
  exchange: Exchange,
): Promise<PollResult> {
  const response = await exchange.get(pollPath('/v1/snapshot', request.waitMs), true);
  const poll = markerOf(response);
  const fleetSize = fleetSizeOf(response);
  if (response.status === 304) return { kind: 'not_modified', poll, fleetSize };
  const refused = await refusal(response);
  if (refused) return refused;
  if (response.status !== 200) throw await unexpected(response);
  const sha256 = response.headers.get('x-rampart-snapshot-sha256') ?? '';
  const version = Number(response.headers.get('x-rampart-snapshot-version'));
  if (!isSha256(sha256) || !Number.isSafeInteger(version) || version < 1) {
    await discard(response);
    throw new DownloadError(
      'the hub answer lacks valid X-Rampart-Snapshot-Sha256/-Version headers',
    );
  }
  if (request.current?.sha256 === sha256) {
    // The hub ignored If-None-Match (a proxy in between?); the content is the one we run.
    await discard(response);
    return { kind: 'not_modified', poll, fleetSize };
  }
  if (await store.exists(sha256)) {
    await discard(response);
    return { kind: 'present', sha256, version, poll, fleetSize };
  }
  const saved = await saveWhole(response, store, sha256, exchange);
  return {
    kind: 'downloaded',
    sha256,
    version,
    ...saved,
    via: 'full',
    deltaError: null,
    poll,
    fleetSize,
  };
}

/** `GET /v1/snapshot/version`, then the delta or the whole file it names. */
async function lookUp(
  request: PollRequest,
  store: SnapshotStore,
  exchange: Exchange,
): Promise<PollResult> {
  const response = await exchange.get(pollPath('/v1/snapshot/version', request.waitMs), true);
  const poll = markerOf(response);
  const fleetSize = fleetSizeOf(response);
  if (response.status === 304) return { kind: 'not_modified', poll, fleetSize };
  const refused = await refusal(response);
  if (refused) return refused;
  if (response.status === 404 && !response.headers.has(PROTOCOL_HEADER)) {
    await discard(response);
    return { kind: 'no_lookup' };
  }
  if (response.status !== 200) throw await unexpected(response);
  const answer = parseVersionAnswer(await readLimited(response, MAX_LOOKUP_BYTES, exchange));
  const { sha256, version } = answer;
  if (request.current?.sha256 === sha256) return { kind: 'not_modified', poll, fleetSize };
  if (await store.exists(sha256)) return { kind: 'present', sha256, version, poll, fleetSize };
  let deltaError: string | null = null;
  const base = request.current;
  if (request.deltas && answer.delta && base && answer.delta.from === base.sha256) {
    try {
      const saved = await fetchDelta(answer.delta.url, base.sha256, sha256, store, exchange);
      return {
        kind: 'downloaded',
        sha256,
        version,
        ...saved,
        via: 'delta',
        deltaError,
        poll,
        fleetSize,
      };
    } catch (error) {
      request.signal.throwIfAborted();
      deltaError = asDownloadError(error, exchange.signal, 'delta').message;
    }
  }
  const whole = await exchange.get(answer.url, false);
  const wholeRefused = await refusal(whole);
  if (wholeRefused) return wholeRefused;
  if (whole.status !== 200) throw await unexpected(whole);
  const saved = await saveWhole(whole, store, sha256, exchange);
  return {
    kind: 'downloaded',
    sha256,
    version,
    ...saved,
    via: 'full',
    deltaError,
    poll,
    fleetSize,
  };
}

/**
 * Fetches the page delta at `url`, rebuilds the new file from `base` (the file in use) and saves
 * it to a temporary file; `applyPageDelta` refuses a delta for another base and any result
 * without the SHA-256 the delta names, which must be the one the hub announced.
 */
async function fetchDelta(
  url: string,
  base: string,
  target: string,
  store: SnapshotStore,
  exchange: Exchange,
): Promise<{ tempPath: string; bytes: number }> {
  const response = await exchange.get(url, false);
  if (response.status !== 200) throw await unexpected(response);
  const wire = Number(response.headers.get('content-length'));
  const delta = await readLimited(response, MAX_SNAPSHOT_BYTES, exchange);
  const rebuilt = applyPageDelta(await readFile(store.pathOf(base)), delta);
  const actual = createHash('sha256').update(rebuilt).digest('hex');
  if (actual !== target)
    throw new DownloadError(
      `the delta rebuilds ${actual.slice(0, 12)}..., the hub announced ${target.slice(0, 12)}...`,
    );
  const tempPath = store.tempPath();
  try {
    const file = await open(tempPath, 'wx');
    try {
      await file.writeFile(rebuilt);
      await file.sync();
    } finally {
      await file.close();
    }
  } catch (error) {
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  return { tempPath, bytes: Number.isSafeInteger(wire) && wire > 0 ? wire : delta.length };
}

function parseVersionAnswer(body: Buffer): VersionAnswer {
  let parsed: Partial<VersionAnswer>;
  try {
    parsed = JSON.parse(body.toString('utf8')) as Partial<VersionAnswer>;
  } catch {
    throw new DownloadError("the hub's version answer is not JSON");
  }
  const { version, sha256, url, delta } = parsed;
  if (
    typeof sha256 !== 'string' ||
    !isSha256(sha256) ||
    !Number.isSafeInteger(version) ||
    (version as number) < 1 ||
    typeof url !== 'string' ||
    !url.startsWith('/v1/snapshots/')
  )
    throw new DownloadError("the hub's version answer lacks a valid version, sha256 or url");
  const validDelta =
    delta !== null &&
    typeof delta === 'object' &&
    typeof delta.from === 'string' &&
    isSha256(delta.from) &&
    typeof delta.url === 'string' &&
    delta.url.startsWith('/v1/snapshots/');
  return { version: version as number, sha256, url, delta: validDelta ? delta : null };
}

/** The request's path with `?wait=` when the hub may hold it. */
function pollPath(path: string, waitMs: number): string {
  return waitMs > 0 ? `${path}?wait=${Math.round(waitMs)}ms` : path;
}

/** The hub's `X-Rampart-Fleet-Size`: a whole number from 1, else null (an older hub). */
export function fleetSizeOf(response: Response): FleetSize {
  const raw = response.headers.get('x-rampart-fleet-size');
  if (raw === null || !/^[1-9][0-9]{0,6}$/.test(raw)) return null;
  return Number(raw);
}

function markerOf(response: Response): PollMarker {
  const marker = response.headers.get('x-rampart-poll');
  return marker === 'held' || marker === 'busy' ? marker : 'none';
}

async function refusal(response: Response): Promise<PollResult | null> {
  if (response.status !== 401 && response.status !== 403) return null;
  await discard(response);
  return { kind: 'unauthorized', status: response.status };
}

async function unexpected(response: Response): Promise<DownloadError> {
  await discard(response);
  return new DownloadError(`the hub answered ${response.status} ${response.statusText}`.trim());
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/**
 * One poll's requests to the hub: the same headers, one abort signal (the client's, and an idle
 * timer that fires after `idleTimeoutMs` without a byte; the first answer may take `waitMs`
 * longer, the time the hub may hold the poll).
 */
class Exchange {
  private readonly controller = new AbortController();
  private idle: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.controller.abort(new DownloadError('sync stopped'));

  constructor(private readonly request: PollRequest) {
    request.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Restarts the idle timer: `extraMs` more than `idleTimeoutMs` from now. */
  touch(extraMs = 0): void {
    clearTimeout(this.idle);
    const ms = this.request.idleTimeoutMs + extraMs;
    this.idle = setTimeout(
      () => this.controller.abort(new DownloadError(`no data from the hub for ${ms} ms`)),
      ms,
    );
    this.idle.unref();
  }

  /** A GET of `path` on the hub; `conditional` adds If-None-Match and our version. */
  async get(path: string, conditional: boolean): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.request.siteKey}`,
      'accept-encoding': 'gzip',
      'x-rampart-instance': this.request.instanceId,
      'user-agent': this.request.userAgent,
    };
    if (this.request.fleetSize !== null)
      headers['x-rampart-fleet-size'] = String(this.request.fleetSize);
    const current = this.request.current;
    if (conditional && current) {
      headers['if-none-match'] = `"${current.sha256}"`;
      headers['x-rampart-snapshot-version'] = String(current.version);
    }
    this.touch(conditional ? this.request.waitMs : 0);
    try {
      return await fetch(new URL(path, this.request.hubUrl), {
        headers,
        redirect: 'error',
        signal: this.controller.signal,
      });
    } catch (error) {
      throw asDownloadError(error, this.controller.signal, 'cannot reach the hub');
    } finally {
      this.touch();
    }
  }

  end(): void {
    clearTimeout(this.idle);
    this.request.signal.removeEventListener('abort', this.onAbort);
  }
}

/** A small body, whole, refused past `limit` bytes. */
async function readLimited(response: Response, limit: number, exchange: Exchange): Promise<Buffer> {
  if (!response.body) throw new DownloadError('the hub sent no body');
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      exchange.touch();
      bytes += chunk.byteLength;
      if (bytes > limit) throw new DownloadError(`the hub's answer exceeds ${limit} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    throw asDownloadError(error, exchange.signal, 'download failed');
  }
  return Buffer.concat(chunks);
}

/** Streams a whole snapshot to a temporary file, checking its size and hash. */
async function saveWhole(
  response: Response,
  store: SnapshotStore,
  sha256: string,
  exchange: Exchange,
): Promise<{ tempPath: string; bytes: number }> {
  const tempPath = store.tempPath();
  try {
    const decoded = await saveBody(response, tempPath, sha256, exchange);
    const wire = Number(response.headers.get('content-length'));
    return { tempPath, bytes: Number.isSafeInteger(wire) && wire > 0 ? wire : decoded };
  } catch (error) {
    await unlink(tempPath).catch(() => undefined);
    throw asDownloadError(error, exchange.signal, 'download failed');
  }
}

/** Streams the body to `path`, checking its size and hash; fsyncs before returning. */
async function saveBody(
  response: Response,
  path: string,
  sha256: string,
  exchange: Exchange,
): Promise<number> {
  if (!response.body) throw new DownloadError('the hub sent no body');
  const hash = createHash('sha256');
  const file = await open(path, 'wx');
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      exchange.touch();
      bytes += chunk.byteLength;
      if (bytes > MAX_SNAPSHOT_BYTES)
        throw new DownloadError(`the snapshot exceeds ${MAX_SNAPSHOT_BYTES} bytes`);
      hash.update(chunk);
      await file.write(chunk);
    }
    exchange.signal.throwIfAborted();
    await file.sync();
  } finally {
    await file.close();
  }
  const actual = hash.digest('hex');
  if (actual !== sha256) {
    throw new DownloadError(
      `the downloaded file (${bytes} bytes) has SHA-256 ${actual.slice(0, 12)}..., the hub announced ${sha256.slice(0, 12)}... (truncated or corrupted in transit)`,
    );
  }
  return bytes;
}

function asDownloadError(error: unknown, signal: AbortSignal, what: string): DownloadError {
  if (error instanceof DownloadError) return error;
  if (signal.aborted && signal.reason instanceof DownloadError) return signal.reason;
  if (error instanceof Error && error.name === 'PageDeltaError')
    return new DownloadError(`${what}: ${error.message}`);
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  const detail = cause?.message ?? (error as Error).message ?? String(error);
  return new DownloadError(`${what}: ${detail}${cause?.code ? ` (${cause.code})` : ''}`);
}
