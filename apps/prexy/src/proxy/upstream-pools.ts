/**
 * One `undici` pool per upstream origin, shared by every request to it: keep-alive connections
 * are reused (the article's "upstream connection reuse"), with the configured timeouts for
 * connect, response headers and body silence. Pools of origins a new configuration no longer
 * names are closed once their requests are done.
 */
import { Pool } from 'undici';
import type { UpstreamTimeouts } from '../config/prexy-file.js';

/** Connections per origin at most: enough for a core's worth of concurrent responses. */
const CONNECTIONS_PER_ORIGIN = 256;
const KEEP_ALIVE_MS = 4_000;

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly timeouts: UpstreamTimeouts) {}

  /** The pool for `origin` (created on first use). */
  get(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        connectTimeout: this.timeouts.connectMs,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
        keepAliveTimeout: KEEP_ALIVE_MS,
        pipelining: 1,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Closes (gracefully) the pools of origins not in `live`. */
  retain(live: ReadonlySet<string>): void {
    for (const [origin, pool] of this.pools) {
      if (live.has(origin)) continue;
      this.pools.delete(origin);
      void pool.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }
}

/** The answer for an upstream failure before any byte of the response was sent. */
export function upstreamFailure(error: Error): { status: 502 | 504; kind: string } {
  const code = (error as Error & { code?: string }).code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { status: 504, kind: 'connect_timeout' };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { status: 504, kind: 'headers_timeout' };
  if (code === 'ECONNREFUSED') return { status: 502, kind: 'connect_refused' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { status: 502, kind: 'dns' };
  return { status: 502, kind: 'upstream_error' };
}
