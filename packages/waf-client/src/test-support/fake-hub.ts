/**
 * A real HTTP server that plays the hub's client endpoints and can misbehave on demand, for the
 * sync tests that need a hub the real one will never be (broken); the happy paths also run
 * against the real hub (`integration/hub.test.ts`, through `@rampart/test-services/hub`).
 *
 * It speaks what the hub speaks (`X-Rampart-Protocol: 2`): the version lookup
 * (`GET /v1/snapshot/version`, offering a page delta from any snapshot in `kept`), the whole file
 * at its immutable URL, page deltas computed with rules-core's encoder, and `GET /v1/snapshot`
 * (`If-None-Match` -> 304, gzip when accepted). With `holds` set, a poll with `?wait=` for the
 * current version is held until `publish()` or the wait, as the hub holds it; by default it is
 * answered at once without saying so, as a hub or proxy that does not hold polls would.
 * `protocol: 1` plays a hub from before the lookup (404 on it, no protocol header).
 *
 * Misbehaviours apply to the file (whole, at either URL) or to the delta:
 * serve other bytes, cut the body short, stall in the middle, answer a status.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { encodePageDelta } from '@rampart/rules-core/snapshot/page-delta';
import { type SnapshotBytes, sha256 } from './snapshots.js';

export type Misbehaviour =
  | { readonly kind: 'none' }
  /** Serve these bytes as the file, announcing `announced` (default: their real hash). */
  | { readonly kind: 'body'; readonly bytes: Buffer; readonly announcedSha256?: string }
  /** Send Content-Length of the full file, then only `bytes` bytes, then close the connection. */
  | { readonly kind: 'truncate'; readonly bytes: number }
  /** Send `bytes` bytes, then nothing (the connection stays open until the server closes). */
  | { readonly kind: 'stall'; readonly bytes: number }
  | { readonly kind: 'status'; readonly status: number; readonly headers?: Record<string, string> }
  /**
   * Serve these bytes as every page delta; the file itself is served correctly, or, with
   * `fileStalls`, stalls after its first bytes.
   */
  | { readonly kind: 'delta'; readonly bytes: Buffer; readonly fileStalls?: boolean };

/** A request as the fake hub saw it: its headers, plus its path in `:path`. */
export type SeenRequest = IncomingHttpHeaders & { readonly ':path': string };

export interface FakeHub {
  readonly url: string;
  /** The snapshot announced and served as current. */
  snapshot: SnapshotBytes | null;
  /** Earlier snapshots the hub still keeps: the lookup offers a delta from these. */
  kept: SnapshotBytes[];
  /** Whether polls with `?wait=` are held (see the module doc). */
  holds: boolean;
  /** Sent as `X-Rampart-Fleet-Size` with every poll answer; null sends none (an older hub). */
  fleetSize: number | null;
  misbehave: Misbehaviour;
  /** Every request received, in order. */
  readonly requests: SeenRequest[];
  /** Polls (lookups and `GET /v1/snapshot`), in order. */
  polls(): SeenRequest[];
  /** Makes `snapshot` current, keeping the previous one, and answers every held poll. */
  publish(snapshot: SnapshotBytes): void;
  /** Polls held right now. */
  held(): number;
  /** Resolves when a request is in the middle of a stalled body. */
  stalled(): Promise<void>;
  close(): Promise<void>;
}

export interface FakeHubOptions {
  /** Default a free one; give the old port to restart a stopped hub. */
  readonly port?: number;
  /** 2 (default): the hub as built; 1: a hub without the version lookup. */
  readonly protocol?: 1 | 2;
}

const POLLS = new Set(['/v1/snapshot', '/v1/snapshot/version']);

export async function startFakeHub(
  key: string,
  snapshot: SnapshotBytes | null = null,
  options: FakeHubOptions = {},
): Promise<FakeHub> {
  const protocol = options.protocol ?? 2;
  const requests: SeenRequest[] = [];
  const open = new Set<ServerResponse>();
  const waiting = new Set<() => void>();
  let onStall: (() => void) | undefined;
  let stalledOnce = false;
  const hub: FakeHub = {
    url: '',
    snapshot,
    kept: [],
    holds: false,
    fleetSize: null,
    misbehave: { kind: 'none' },
    requests,
    polls: () => requests.filter((r) => POLLS.has(r[':path'].split('?')[0] ?? '')),
    publish: (next) => {
      if (hub.snapshot) hub.kept.push(hub.snapshot);
      hub.snapshot = next;
      for (const wake of [...waiting]) wake();
    },
    held: () => waiting.size,
    stalled: () =>
      stalledOnce
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onStall = resolve;
          }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const wake of [...waiting]) wake();
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  /** Serves the current file (or its misbehaving stand-in) with the hub's headers. */
  const sendFile = (req: IncomingMessage, res: ServerResponse, current: SnapshotBytes) => {
    const set = hub.misbehave;
    const m: Misbehaviour =
      set.kind === 'delta' && set.fileStalls ? { kind: 'stall', bytes: 100 } : set;
    const headers: Record<string, string> = {
      etag: `"${current.sha256}"`,
      'x-rampart-snapshot-version': String(current.version),
      'x-rampart-snapshot-sha256': current.sha256,
      'content-type': 'application/vnd.sqlite3',
    };
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
    send(req, res, 200, headers, current.bytes);
  };

  /** The announced version: the misbehaving body's hash when one is served instead. */
  const announced = (current: SnapshotBytes) => {
    const m = hub.misbehave;
    return m.kind === 'body' ? (m.announcedSha256 ?? sha256(m.bytes)) : current.sha256;
  };

  /** Waits, if asked to and allowed, until the current version differs from the client's. */
  const holdPoll = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const wait = /[?&]wait=(\d+)ms/.exec(req.url ?? '');
    const current = hub.snapshot;
    const named = current && req.headers['if-none-match'] === `"${announced(current)}"`;
    if (!hub.holds || !wait || !named) return false;
    res.setHeader('x-rampart-poll', 'held');
    await new Promise<void>((resolve) => {
      const wake = () => {
        waiting.delete(wake);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(wake, Number(wait[1]));
      waiting.add(wake);
      res.once('close', wake);
    });
    return true;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (protocol === 2) res.setHeader('x-rampart-protocol', '2');
    if (protocol === 1 && path !== '/v1/snapshot') {
      res.removeHeader('x-rampart-protocol');
      return void res.writeHead(404).end();
    }
    if (req.headers.authorization !== `Bearer ${key}`) return void res.writeHead(401).end();
    const m = hub.misbehave;
    if (m.kind === 'status') return void res.writeHead(m.status, m.headers ?? {}).end();
    if (POLLS.has(path)) await holdPoll(req, res);
    if (res.destroyed) return;
    if (POLLS.has(path) && hub.fleetSize !== null)
      res.setHeader('x-rampart-fleet-size', String(hub.fleetSize));
    const current = hub.snapshot;
    if (!current) return void res.writeHead(404).end();
    const etag = `"${announced(current)}"`;
    if (path === '/v1/snapshot/version') {
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      const base = /^"([0-9a-f]{64})"$/.exec(String(req.headers['if-none-match'] ?? ''))?.[1];
      const sha = announced(current);
      const from = hub.kept.find((k) => k.sha256 === base);
      const body = {
        version: current.version,
        sha256: sha,
        bytes: current.bytes.length,
        url: `/v1/snapshots/${sha}`,
        delta: from
          ? { from: from.sha256, url: `/v1/snapshots/${sha}/delta/${from.sha256}` }
          : null,
      };
      return void send(
        req,
        res,
        200,
        { etag, 'content-type': 'application/json' },
        Buffer.from(JSON.stringify(body)),
      );
    }
    if (path === '/v1/snapshot') {
      if (req.headers['if-none-match'] === etag && m.kind === 'none')
        return void res.writeHead(304, { etag }).end();
      return sendFile(req, res, current);
    }
    const delta = /^\/v1\/snapshots\/([0-9a-f]{64})\/delta\/([0-9a-f]{64})$/.exec(path);
    if (delta) {
      const from = hub.kept.find((k) => k.sha256 === delta[2]);
      if (!from || delta[1] !== announced(current)) return void res.writeHead(404).end();
      const bytes = m.kind === 'delta' ? m.bytes : encodePageDelta(from.bytes, current.bytes);
      return void send(
        req,
        res,
        200,
        { 'content-type': 'application/vnd.rampart.page-delta' },
        bytes,
      );
    }
    if (path === `/v1/snapshots/${announced(current)}`) return sendFile(req, res, current);
    res.writeHead(404).end();
  };

  const server: Server = createServer((req, res) => {
    requests.push({ ...req.headers, ':path': req.url ?? '' });
    open.add(res);
    res.on('close', () => open.delete(res));
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  (hub as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return hub;
}

/** Answers `bytes`, gzipped when the client accepts it. */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  bytes: Buffer,
): void {
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? gzipSync(bytes) : bytes;
  res.writeHead(status, {
    ...headers,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    'content-length': String(body.length),
  });
  res.end(body);
}
