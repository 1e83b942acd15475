/**
 * One poll of the hub: `GET /v1/snapshot` with the site key in `Authorization`, the snapshot we
 * hold in `If-None-Match`, and our identity in `X-Rampart-Instance` / `X-Rampart-Snapshot-Version`.
 *
 * - 304: nothing to do.
 * - 200: the body is streamed (gzip decoded by fetch) into a temporary file of this process while
 *   its SHA-256 is computed; the download succeeds only when the hash equals the hub's
 *   `X-Rampart-Snapshot-Sha256`. A truncated, padded or garbled body therefore never leaves this
 *   module as a file. If the content-addressed file already exists (another process of this host
 *   downloaded it), the body is not read at all.
 * - 401/403: the key was refused; the caller stops syncing.
 * - anything else, a network error, or no byte for `idleTimeoutMs`: {@link DownloadError}.
 *
 * Redirects are refused: following one could send the key to another origin.
 */
import { createHash } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { isSha256, type SnapshotStore } from './snapshot-store.js';

/** Larger bodies are refused (a snapshot of every public dataset is well below 1 GiB). */
const MAX_SNAPSHOT_BYTES = 1 << 30;

export type PollResult =
  | { readonly kind: 'not_modified' }
  | { readonly kind: 'unauthorized'; readonly status: number }
  /** Verified bytes in `tempPath` (the caller owns the file). */
  | {
      readonly kind: 'downloaded';
      readonly sha256: string;
      readonly version: number;
      readonly tempPath: string;
      readonly bytes: number;
    }
  /** The hub's current file is already in the data directory. */
  | { readonly kind: 'present'; readonly sha256: string; readonly version: number };

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
  readonly idleTimeoutMs: number;
  readonly userAgent: string;
  /** Aborts the poll (client shutting down). */
  readonly signal: AbortSignal;
}

export async function pollHub(request: PollRequest, store: SnapshotStore): Promise<PollResult> {
  const controller = new AbortController();
  const abort = () => controller.abort(new DownloadError('sync stopped'));
  request.signal.addEventListener('abort', abort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(
      () =>
        controller.abort(new DownloadError(`no data from the hub for ${request.idleTimeoutMs} ms`)),
      request.idleTimeoutMs,
    );
    idle.unref();
  };
  try {
    touch();
    const headers: Record<string, string> = {
      authorization: `Bearer ${request.siteKey}`,
      'accept-encoding': 'gzip',
      'x-rampart-instance': request.instanceId,
      'user-agent': request.userAgent,
    };
    if (request.current) {
      headers['if-none-match'] = `"${request.current.sha256}"`;
      headers['x-rampart-snapshot-version'] = String(request.current.version);
    }
    let response: Response;
    try {
      response = await fetch(`${request.hubUrl}/v1/snapshot`, {
        headers,
        redirect: 'error',
        signal: controller.signal,
      });
    } catch (error) {
      throw asDownloadError(error, controller.signal, 'cannot reach the hub');
    }
    if (response.status === 304) return { kind: 'not_modified' };
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'unauthorized', status: response.status };
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new DownloadError(`the hub answered ${response.status} ${response.statusText}`.trim());
    }
    const sha256 = response.headers.get('x-rampart-snapshot-sha256') ?? '';
    const version = Number(response.headers.get('x-rampart-snapshot-version'));
    if (!isSha256(sha256) || !Number.isSafeInteger(version) || version < 1) {
      await response.body?.cancel().catch(() => undefined);
      throw new DownloadError(
        'the hub answer lacks valid X-Rampart-Snapshot-Sha256/-Version headers',
      );
    }
    if (request.current?.sha256 === sha256) {
      // The hub ignored If-None-Match (a proxy in between?); the content is the one we run.
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'not_modified' };
    }
    if (await store.exists(sha256)) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'present', sha256, version };
    }
    const tempPath = store.tempPath();
    try {
      const bytes = await saveBody(response, tempPath, sha256, touch, controller.signal);
      return { kind: 'downloaded', sha256, version, tempPath, bytes };
    } catch (error) {
      await unlink(tempPath).catch(() => undefined);
      throw asDownloadError(error, controller.signal, 'download failed');
    }
  } finally {
    clearTimeout(idle);
    request.signal.removeEventListener('abort', abort);
  }
}

/** Streams the body to `path`, checking its size and hash; fsyncs before returning. */
async function saveBody(
  response: Response,
  path: string,
  sha256: string,
  touch: () => void,
  signal: AbortSignal,
): Promise<number> {
  if (!response.body) throw new DownloadError('the hub sent no body');
  const hash = createHash('sha256');
  const file = await open(path, 'wx');
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      touch();
      bytes += chunk.byteLength;
      if (bytes > MAX_SNAPSHOT_BYTES)
        throw new DownloadError(`the snapshot exceeds ${MAX_SNAPSHOT_BYTES} bytes`);
      hash.update(chunk);
      await file.write(chunk);
    }
    signal.throwIfAborted();
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
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  const detail = cause?.message ?? (error as Error).message ?? String(error);
  return new DownloadError(`${what}: ${detail}${cause?.code ? ` (${cause.code})` : ''}`);
}
