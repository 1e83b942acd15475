/**
 * What the proxy's integration tests start on loopback: a real `node:http` origin whose
 * behaviour each test writes, a real {@link PrexyServer} in front of it configured through the
 * file parser (the same validation a user's file gets), and clients that see what a client
 * sees: whole responses with their trailers, or raw bytes over a socket. Every wait is bounded.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { parsePrexyFile } from '../config/prexy-file.js';
import type { AccessLogLine } from '../proxy/proxy-handler.js';
import { PrexyServer } from '../server/prexy-server.js';

export const HOST = 'shop.test';
const WAIT_MS = 10_000;

export interface Origin {
  readonly port: number;
  readonly url: string;
  /** Requests the origin received, in order. */
  readonly seen: IncomingMessage[];
  close(): Promise<void>;
}

export async function startOrigin(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Origin> {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req);
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Prexy {
  readonly server: PrexyServer;
  readonly port: number;
  readonly logs: AccessLogLine[];
  readonly warnings: string[];
  /** Parses `sites` as a file's `sites` and installs them (throws like `install`). */
  install(sites: unknown[]): void;
  close(): Promise<void>;
}

/** A one-site file: `HOST` -> `upstream`, with the given rule sets and route options. */
export function siteFile(
  upstream: string,
  ruleSets: unknown[],
  route: Record<string, unknown> = {},
): unknown[] {
  return [{ name: 'shop', proxy: { routes: [{ host: HOST, upstream, ...route }], ruleSets } }];
}

export async function startPrexy(
  sites: unknown[],
  top: Record<string, unknown> = {},
): Promise<Prexy> {
  const file = parsed({ listen: { host: '127.0.0.1', port: 0 }, accessLog: false, ...top, sites });
  const logs: AccessLogLine[] = [];
  const warnings: string[] = [];
  const server = new PrexyServer(file, {
    log: (line) => logs.push(line),
    warn: (message) => warnings.push(message),
  });
  const port = await server.listen();
  return {
    server,
    port,
    logs,
    warnings,
    install: (next) => server.install(parsed({ ...top, sites: next }).sites),
    close: () => server.close(1_000),
  };
}

function parsed(json: unknown) {
  const result = parsePrexyFile(json);
  if (!result.ok) throw new Error(`test configuration refused: ${JSON.stringify(result.issues)}`);
  return result.file;
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly trailers: Record<string, string | undefined>;
}

/**
 * One request through a fresh connection, read whole. Rejects when the response is cut
 * (`aborted`) or the connection fails, so a test can tell a cut body from a whole one.
 */
export function fetch(
  port: number,
  path: string,
  options: {
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: Buffer;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer for ${path}`)), WAIT_MS);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: { host: HOST, ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('aborted', () => reject(new Error('response aborted')));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          if (!res.complete) {
            reject(new Error('response incomplete'));
            return;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            trailers: res.trailers,
          });
        });
      },
    );
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(options.body);
  });
}

/** Writes `bytes` on a raw connection and returns everything read until the server closes. */
export function exchange(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    }, WAIT_MS);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.write(bytes);
  });
}

/**
 * Reads `path` through prexy like a client that stops reading: it pauses the response for
 * 800 ms and checks that, meanwhile, the origin's writes (`upstreamWritten()`) stalled below
 * half of `upstreamTotal` (backpressure reached the origin), then reads to the end. Resolves
 * with the bytes received.
 */
export function readWhilePaused(
  port: number,
  path: string,
  upstreamWritten: () => number,
  upstreamTotal: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host: HOST }, agent: false },
      (res) => {
        res.pause();
        void sleep(500).then(async () => {
          const stalled = upstreamWritten();
          await sleep(300);
          const now = upstreamWritten();
          if (now !== stalled || now >= upstreamTotal / 2) {
            req.destroy();
            reject(
              new Error(
                `the origin kept writing while the client read nothing: ${stalled} then ${now} of ${upstreamTotal} bytes`,
              ),
            );
            return;
          }
          let received = 0;
          res.on('data', (c: Buffer) => {
            received += c.length;
          });
          res.on('end', () => resolve(received));
          res.resume();
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Polls `check` until it holds, for at most `ms`. */
export async function eventually(
  what: string,
  check: () => boolean,
  ms: number = WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
