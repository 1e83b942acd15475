/**
 * A stand-in for the hub's client endpoints, for the benchmark only: it serves one snapshot
 * file at a time the way the hub does (`GET /v1/snapshot` with the site key, `If-None-Match`
 * answered with 304, `X-Rampart-Snapshot-Sha256` / `-Version` headers), and accepts report
 * batches (`POST /v1/reports`) and throws them away. `publish()` switches the file served, which
 * is what an operator's rule change followed by a hub build looks like to a client.
 *
 * It exists so the benchmark can make a client swap a 1.07M-range snapshot under load without
 * importing that data into a real hub first; the client under test is the real one.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256OfFile } from '../waf/snapshot-dir.js';

export interface BenchHub {
  readonly url: string;
  readonly siteKey: string;
  /** Serves `file` as `version` from now on. */
  publish(file: string, version: number): Promise<void>;
  /** Requests seen: snapshot polls, downloads (200) and report batches. */
  counts(): { polls: number; downloads: number; reports: number };
  close(): Promise<void>;
}

interface Published {
  readonly file: string;
  readonly version: number;
  readonly sha256: string;
  readonly bytes: number;
}

export async function startBenchHub(siteKey: string): Promise<BenchHub> {
  let current: Published | null = null;
  const counts = { polls: 0, downloads: 0, reports: 0 };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== `Bearer ${siteKey}`) {
      res.writeHead(401).end();
      req.resume();
      return;
    }
    if (req.method === 'POST' && req.url === '/v1/reports') {
      counts.reports++;
      req.resume();
      req.once('end', () => res.writeHead(202).end());
      return;
    }
    if (req.method !== 'GET' || req.url !== '/v1/snapshot') {
      res.writeHead(404).end();
      return;
    }
    counts.polls++;
    if (!current) {
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
    counts.downloads++;
    res.writeHead(200, {
      ...headers,
      'content-type': 'application/vnd.sqlite3',
      'content-length': String(current.bytes),
    });
    createReadStream(current.file).pipe(res);
  };

  const server: Server = createServer(handle);
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    siteKey,
    async publish(file, version) {
      current = { file, version, sha256: await sha256OfFile(file), bytes: (await stat(file)).size };
    },
    counts: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
