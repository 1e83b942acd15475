/**
 * A prexy worker: the HTTP server, the configuration in force and what it shares across
 * requests (compiled rule sets, upstream pools, the bitmap cache, counters).
 *
 * `install(sites)` swaps in a new configuration atomically: the new route table is built first
 * (compiling only rule sets the cache lacks); if any rule set fails to compile, it throws and
 * the table in force stays. Requests already running keep the table they started with.
 *
 * Malformed requests never reach an upstream: Node's parser refuses them and prexy answers 400,
 * or 431 for headers over `maxHeaderSize`, then closes the connection. `CONNECT` (a tunnel to a
 * host of the client's choosing) is answered 405.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { appLogger, type Logger } from '@rampart/telemetry/logging/logger';
import { MatchBitmapCache } from '../bitmap/match-bitmap.js';
import type { PrexyFile, SiteEntry } from '../config/prexy-file.js';
import { newCounters, type ProxyCounters } from '../proxy/proxy-counters.js';
import { type AccessLogLine, createProxyHandler, type EdgeGuard } from '../proxy/proxy-handler.js';
import { UpstreamPools } from '../proxy/upstream-pools.js';
import { RouteTable } from '../routing/route-table.js';
import { CompiledSets } from '../rules/compiled-sets.js';
import { ProxyMetrics } from '../telemetry/proxy-metrics.js';

/** Request headers larger than this are answered 431 (Node's default is 16 KiB). */
export const MAX_HEADER_BYTES = 16 * 1024;

export interface PrexyServerOptions {
  /** Where the access log lines go (default: `logger`, if the file enables them). */
  readonly log?: (line: AccessLogLine) => void;
  /** Where warnings go (default: `logger`). */
  readonly warn?: (message: string) => void;
  /** The worker's JSON logger (default `appLogger('rampart-prexy')`). */
  readonly logger?: Logger;
  /** The edge WAF per site (see `edge-waf.ts`). */
  readonly edgeGuard?: (site: string) => EdgeGuard | undefined;
}

export class PrexyServer {
  readonly server: Server;
  readonly counters: ProxyCounters = newCounters();
  readonly sets = new CompiledSets();
  readonly bitmap: MatchBitmapCache | undefined;
  private readonly metrics: ProxyMetrics;
  private readonly pools: UpstreamPools;
  private table: RouteTable;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly file: PrexyFile,
    options: PrexyServerOptions = {},
  ) {
    this.table = RouteTable.build(file.sites, this.sets);
    this.pools = new UpstreamPools(file.timeouts);
    this.bitmap = file.matchCacheBytes > 0 ? new MatchBitmapCache(file.matchCacheBytes) : undefined;
    const logger = options.logger ?? appLogger('rampart-prexy');
    const warn = options.warn ?? ((m: string) => logger.warn(m));
    const log =
      options.log ??
      (file.accessLog ? (line: AccessLogLine) => logger.info(line, 'request') : undefined);
    this.metrics = new ProxyMetrics(this.counters);
    const handler = createProxyHandler({
      table: () => this.table,
      sets: this.sets,
      pools: this.pools,
      bitmap: this.bitmap,
      counters: this.counters,
      metrics: this.metrics,
      log,
      warn,
      ...(options.edgeGuard ? { edgeGuard: options.edgeGuard } : {}),
    });
    this.server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      handler(req as IncomingMessage, res as ServerResponse);
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
      // Node reports every failed client connection here, not only what its parser refused: a
      // client's reset, or a response prexy cut because its upstream failed mid-body. Those
      // refused nothing and have nothing left to answer.
      if (!socket.writable || !error.code?.startsWith('HPE_')) {
        socket.destroy();
        return;
      }
      this.counters.refused++;
      const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
      const body = tooLarge ? 'request headers too large\n' : 'malformed request\n';
      const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(
        `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
    });

    // CONNECT asks for a tunnel to wherever the client names: never offered (no open proxy).
    this.server.on('connect', (_req: IncomingMessage, socket: Socket) => {
      this.counters.refused++;
      const body = 'prexy does not tunnel\n';
      socket.end(
        `HTTP/1.1 405 Method Not Allowed\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  }

  /** The route table in force. */
  get routes(): RouteTable {
    return this.table;
  }

  /**
   * Swaps in the sites' configuration; throws (a `RuleSetError` naming the rule) and keeps the
   * one in force when a rule set does not compile.
   */
  install(sites: readonly SiteEntry[]): void {
    const next = RouteTable.build(sites, this.sets);
    this.table = next;
    this.sets.retain(next.ruleSetIds);
    this.pools.retain(
      new Set(sites.flatMap((s) => s.proxy.routes.map((r) => new URL(r.upstream).origin))),
    );
  }

  /** Listens on the file's address (port 0: any free port); resolves the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.file.listen.port, this.file.listen.host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops taking connections, lets requests in flight finish for up to `graceMs`, then closes
   * what is left and the upstream pools.
   */
  async close(graceMs = 10_000): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const timer = setTimeout(() => {
      for (const socket of this.sockets) socket.destroy();
    }, graceMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
    await this.pools.close();
    this.metrics.close();
  }
}
