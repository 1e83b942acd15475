/**
 * A real HTTP server that plays the hub's `GET /v1/snapshot` (same headers, `If-None-Match` ->
 * 304, gzip when accepted) and can misbehave on demand: serve garbage, cut the body short,
 * announce a wrong hash, answer an error status, or stall in the middle of the body. Used where a
 * test needs a hub that the real one will never be (broken); the happy paths also run against
 * the real hub (see `hub-launcher.ts`).
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { type SnapshotBytes, sha256 } from './snapshots.js';

export type Misbehaviour =
  | { readonly kind: 'none' }
  /** Serve these bytes, announcing `announced` (default: their real hash). */
  | { readonly kind: 'body'; readonly bytes: Buffer; readonly announcedSha256?: string }
  /** Send Content-Length of the full file, then only `bytes` bytes, then close the connection. */
  | { readonly kind: 'truncate'; readonly bytes: number }
  /** Send `bytes` bytes, then nothing (the connection stays open until the server closes). */
  | { readonly kind: 'stall'; readonly bytes: number }
  | { readonly kind: 'status'; readonly status: number; readonly headers?: Record<string, string> };

export interface FakeHub {
  readonly url: string;
  /** The snapshot announced and served as current. */
  snapshot: SnapshotBytes | null;
  misbehave: Misbehaviour;
  /** Headers of every request received, in order. */
  readonly requests: IncomingHttpHeaders[];
  /** Resolves when a request is in the middle of a stalled body. */
  stalled(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the fake hub on `port` (default: a free one; give the old port to restart a stopped hub). */
export async function startFakeHub(
  key: string,
  snapshot: SnapshotBytes | null = null,
  port = 0,
): Promise<FakeHub> {
  const requests: IncomingHttpHeaders[] = [];
  const open = new Set<ServerResponse>();
  let onStall: (() => void) | undefined;
  let stalledOnce = false;
  const hub: FakeHub = {
    url: '',
    snapshot,
    misbehave: { kind: 'none' },
    requests,
    stalled: () =>
      stalledOnce
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onStall = resolve;
          }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    open.add(res);
    res.on('close', () => open.delete(res));
    if (req.url !== '/v1/snapshot') return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${key}`) return void res.writeHead(401).end();
    const m = hub.misbehave;
    if (m.kind === 'status') return void res.writeHead(m.status, m.headers ?? {}).end();
    const current = hub.snapshot;
    if (!current) return void res.writeHead(404).end();
    const etag = `"${current.sha256}"`;
    const headers: Record<string, string> = {
      etag,
      'x-rampart-snapshot-version': String(current.version),
      'x-rampart-snapshot-sha256': current.sha256,
      'content-type': 'application/vnd.sqlite3',
    };
    if (req.headers['if-none-match'] === etag && m.kind === 'none')
      return void res.writeHead(304, headers).end();
    if (m.kind === 'body') {
      const announced = m.announcedSha256 ?? sha256(m.bytes);
      headers['x-rampart-snapshot-sha256'] = announced;
      headers.etag = `"${announced}"`;
      res.writeHead(200, { ...headers, 'content-length': String(m.bytes.length) });
      return void res.end(m.bytes);
    }
    if (m.kind === 'truncate') {
      res.writeHead(200, { ...headers, 'content-length': String(current.bytes.length) });
      res.write(current.bytes.subarray(0, m.bytes));
      setTimeout(() => res.destroy(), 20);
      return;
    }
    if (m.kind === 'stall') {
      res.writeHead(200, { ...headers, 'content-length': String(current.bytes.length) });
      res.write(current.bytes.subarray(0, m.bytes), () => {
        stalledOnce = true;
        onStall?.();
      });
      return; // never ends
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? gzipSync(current.bytes) : current.bytes;
    if (gzip) headers['content-encoding'] = 'gzip';
    res.writeHead(200, { ...headers, 'content-length': String(body.length) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  (hub as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return hub;
}
