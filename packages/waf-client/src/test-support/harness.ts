/**
 * Test plumbing: a client with a collecting logger and a temporary data directory, a real
 * node:http app behind the middleware that echoes `req.rampart`, and a raw HTTP caller (exact
 * headers, IPv4 or IPv6 loopback).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { RampartOptions } from '../config/options.js';
import type { RampartLogger } from '../logging/logger.js';
import type { RampartRequestInfo } from '../middleware/request-info.js';
import { createRampart, type Rampart } from '../rampart.js';
import { temporaryDirectory } from './snapshots.js';

export const SITE_KEY = 'rk_test_0123456789abcdefghijklmnopqrstuv';

export interface CollectingLogger extends RampartLogger {
  readonly lines: string[];
}

export function collectingLogger(): CollectingLogger {
  const lines: string[] = [];
  const push =
    (level: string) =>
    (message: string, ...rest: unknown[]) =>
      void lines.push(`${level} ${message}${rest.length ? ` ${JSON.stringify(rest)}` : ''}`);
  return { lines, info: push('info'), warn: push('warn'), error: push('error') };
}

export interface TestClient {
  readonly rampart: Rampart;
  readonly logger: CollectingLogger;
  readonly dataDir: string;
  /** Closes the client, checks the key never reached the logger, removes the data directory. */
  close(): Promise<void>;
}

export function testClient(options: RampartOptions & { keepDataDir?: boolean }): TestClient {
  const temp = options.dataDir ? null : temporaryDirectory();
  const logger = collectingLogger();
  const dataDir = options.dataDir ?? (temp as { dir: string }).dir;
  const rampart = createRampart({
    siteKey: SITE_KEY,
    syncIntervalMs: 60_000,
    syncEveryRequests: 0,
    reportIntervalMs: 60_000,
    closeTimeoutMs: 1000,
    env: {},
    logger,
    ...options,
    dataDir,
  });
  return {
    rampart,
    logger,
    dataDir,
    close: async () => {
      await rampart.close();
      expect(logger.lines.join('\n')).not.toContain(options.siteKey ?? SITE_KEY);
      if (!options.keepDataDir) temp?.remove();
    },
  };
}

export interface TestApp {
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** A node:http app: the middleware, then a handler answering 200 with `req.rampart` as JSON. */
export async function startApp(rampart: Rampart, host = '127.0.0.1'): Promise<TestApp> {
  const server = createServer((req, res) => {
    rampart.middleware(req, res, (err?: unknown) => {
      if (err) {
        res.writeHead(500).end(String(err));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.rampart ?? null));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `req.rampart` as the app saw it (when the app answered). */
  readonly info: RampartRequestInfo | null;
}

export function call(
  port: number,
  path = '/',
  options: { method?: string; headers?: Record<string, string>; host?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: options.host ?? '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const json = res.headers['content-type'] === 'application/json';
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            info: json ? (JSON.parse(body) as RampartRequestInfo) : null,
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Polls `probe` every 20 ms until it is truthy; fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A minimal request object for driving the middleware in-process (load tests, benchmarks). */
export function fakeRequest(
  path: string,
  ip = '192.0.2.1',
  method = 'GET',
  headers: Record<string, string> = {},
): IncomingMessage {
  return {
    url: path,
    method,
    headers: { host: 'shop.example', 'user-agent': 'Mozilla/5.0 (test)', ...headers },
    socket: { remoteAddress: ip },
  } as unknown as IncomingMessage;
}

/**
 * Resolves after the current turn of the event loop has run its `setImmediate` callbacks: by
 * then the middleware has applied the verdicts of the requests handed to it (batched evaluation
 * answers at the end of the turn they arrived in).
 */
export function endOfTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What became of a request handed to the middleware: continued, refused (status), or neither yet. */
export type Outcome = 'next' | number | 'waiting';

/**
 * Hands one fake request to `rampart`'s middleware. `outcome()` reads what became of it; with
 * batched evaluation a held request stays `waiting` until {@link endOfTurn}.
 */
export function handOver(
  rampart: Rampart,
  path: string,
  options: { ip?: string; method?: string; next?: () => void } = {},
): { readonly req: IncomingMessage; outcome(): Outcome } {
  const req = fakeRequest(path, options.ip, options.method);
  const res = fakeResponse();
  let continued = false;
  rampart.middleware(req, res, () => {
    continued = true;
    options.next?.();
  });
  return { req, outcome: () => (continued ? 'next' : res.statusWritten || 'waiting') };
}

/** A response object that records what the middleware wrote. */
export function fakeResponse(): ServerResponse & {
  statusWritten: number;
  headersWritten: Record<string, unknown>;
} {
  const res = {
    headersSent: false,
    statusWritten: 0,
    headersWritten: {} as Record<string, unknown>,
    writeHead(status: number, headers: Record<string, unknown>) {
      res.statusWritten = status;
      Object.assign(res.headersWritten, headers);
      return res;
    },
    setHeader(name: string, value: unknown) {
      res.headersWritten[name] = value;
      return res;
    },
    end() {
      return res;
    },
  };
  return res as unknown as ServerResponse & {
    statusWritten: number;
    headersWritten: Record<string, unknown>;
  };
}
