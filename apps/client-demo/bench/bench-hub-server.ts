/**
 * The worker thread of the benchmark's stand-in hub (`bench-hub.ts`): an HTTP server for the
 * hub's client endpoints. It runs on its own thread at the lowest priority so that serving a
 * download takes CPU only when the app under test leaves it, as when the hub is on another host
 * (the only situation the benchmark is about). Messages in: `{ publish: Published }`, answered
 * with `{ published: version }`. Out, once: `{ url }`.
 */
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

/** A snapshot file as the hub announces it (hashed before the benchmark's load starts). */
export interface Published {
  readonly file: string;
  readonly version: number;
  readonly sha256: string;
  readonly bytes: number;
}

const port = parentPort;
if (port === null) throw new Error('bench-hub-server runs as a worker thread only');
const { siteKey } = workerData as { siteKey: string };

if (process.platform === 'linux') {
  try {
    setPriority(constants.priority.PRIORITY_LOW); // this thread only (Linux nice is per thread)
  } catch {
    // not permitted: it serves at normal priority
  }
}

let current: Published | null = null;

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers.authorization !== `Bearer ${siteKey}`) {
    res.writeHead(401).end();
    req.resume();
    return;
  }
  if (req.method === 'POST' && req.url === '/v1/reports') {
    req.resume(); // accepted and thrown away
    req.once('end', () => res.writeHead(202).end());
    return;
  }
  if (req.method !== 'GET' || req.url !== '/v1/snapshot' || current === null) {
    res.writeHead(404).end();
    return;
  }
  const etag = `"${current.sha256}"`;
  const headers = {
    etag,
    'x-rampart-snapshot-sha256': current.sha256,
    'x-rampart-snapshot-version': String(current.version),
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/vnd.sqlite3',
    'content-length': String(current.bytes),
  });
  createReadStream(current.file).pipe(res);
}

const server = createServer(handle);
server.listen(0, '127.0.0.1', () => {
  port.postMessage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
port.on('message', (message: { publish: Published }) => {
  current = message.publish;
  port.postMessage({ published: current.version });
});
