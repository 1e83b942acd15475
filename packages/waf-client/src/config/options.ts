/**
 * The options of `createRampart`, their `RAMPART_*` environment variables, defaults and
 * validation.
 *
 * Every option can come from the code or from the environment; a value given in code wins. All
 * problems are collected and thrown at once as a {@link RampartConfigError} whose message names
 * the option and its variable, so a bad deployment stops at start with one readable message
 * rather than misbehaving later. The site key is never part of an error message.
 */
import { hostname } from 'node:os';
import { DEFAULT_ADDRESS_MEMO } from '@rampart/rules-core/evaluator/evaluator';
import { DEFAULT_FIELD_MEMO } from '@rampart/rules-core/evaluator/pattern-index';
import { parseIpRange } from '@rampart/rules-core/ip/range';
import type { RampartLogger } from '../logging/logger.js';

/** `off`: do nothing; `monitor`: evaluate and report, never block; `enforce`: act on decisions. */
export type RampartMode = 'off' | 'monitor' | 'enforce';

/** What happens to requests while no snapshot is loaded (and when the WAF itself fails). */
export type FailMode = 'open' | 'closed';

export interface BlockResponse {
  /** HTTP status of a blocked request (400-599, default 403). */
  readonly status: number;
  /** Response body; `{requestId}` is replaced by the request id. */
  readonly body: string;
  /** Extra response headers (names are case-insensitive). */
  readonly headers: Readonly<Record<string, string>>;
}

/** When requests are evaluated (see {@link RampartOptions.evaluation}). */
export type Evaluation = 'batched' | 'inline';

/** Which answers carry the rate-limit headers (see {@link RampartOptions.rateLimitHeaders}). */
export type RateLimitHeaders = 'refusals' | 'all';

export interface RampartOptions {
  /** Base URL of the hub, e.g. `https://hub.example.com` (RAMPART_HUB_URL). */
  readonly hubUrl?: string;
  /** The site key the hub issued (RAMPART_SITE_KEY). Sent only in `Authorization`; never logged. */
  readonly siteKey?: string;
  /** Where snapshots are kept, shared by the processes of one host (RAMPART_DATA_DIR, default `./.rampart`). */
  readonly dataDir?: string;
  /** Mean time between polls of the hub, jittered by ±20% (RAMPART_SYNC_INTERVAL_MS, default 30000). */
  readonly syncIntervalMs?: number;
  /** Also poll after this many requests (RAMPART_SYNC_EVERY_REQUESTS, default 10000; 0 disables). */
  readonly syncEveryRequests?: number;
  /**
   * How long the hub may hold a poll until it publishes a new version (a blocking poll;
   * RAMPART_SYNC_WAIT_MS, default 30000, jittered by ±10%). A new version then arrives within
   * about a second of its publication instead of within an interval. 0 polls every
   * `syncIntervalMs` instead, as does a client whose hub (or a proxy in between) does not hold
   * polls, for a while after it noticed.
   */
  readonly syncWaitMs?: number;
  /**
   * Download only the pages that changed since the snapshot in use, when the hub offers a delta
   * (RAMPART_SYNC_DELTAS, default true). The rebuilt file is verified like a download; any
   * failure falls back to the whole file.
   */
  readonly syncDeltas?: boolean;
  /** Applies while no snapshot is loaded and when the WAF fails (RAMPART_FAIL_MODE, default `open`). */
  readonly failMode?: FailMode;
  /** CIDRs or addresses of proxies whose `X-Forwarded-For` is believed (RAMPART_TRUSTED_PROXIES, comma-separated). */
  readonly trustedProxies?: readonly string[];
  /** The answer to blocked requests (RAMPART_BLOCK_STATUS, RAMPART_BLOCK_BODY). */
  readonly blockResponse?: Partial<BlockResponse>;
  /** Most events in one report batch (RAMPART_REPORT_BATCH_SIZE, default 250). */
  readonly reportBatchSize?: number;
  /** Longest time an event waits before its batch is sent (RAMPART_REPORT_INTERVAL_MS, default 5000). */
  readonly reportIntervalMs?: number;
  /** Events held in memory at most; more are dropped and counted (RAMPART_REPORT_QUEUE_SIZE, default 10000). */
  readonly reportQueueSize?: number;
  /** Share of passed and allowed requests sent as samples, 0..1 (RAMPART_PASS_SAMPLE_RATE, default 0.01). */
  readonly passSampleRate?: number;
  /** Global mode (RAMPART_MODE, default `enforce`). */
  readonly mode?: RampartMode;
  /**
   * Which answers carry `RateLimit` / `RateLimit-Policy` (RAMPART_RATE_LIMIT_HEADERS, default
   * `refusals`): `refusals` only on 429s; `all` also on every passing request a rate-limit rule
   * counted. `all` tells each client exactly how much room it has left, which helps a scraper pace
   * itself just under a limit, and costs two headers on every page; choose it for APIs whose
   * clients are expected to throttle themselves.
   */
  readonly rateLimitHeaders?: RateLimitHeaders;
  /** Where report batches are POSTed (RAMPART_REPORT_URL, default `${hubUrl}/v1/reports`). */
  readonly reportUrl?: string;
  /** Names this process to the hub (RAMPART_INSTANCE_ID, default `hostname:pid`). */
  readonly instanceId?: string;
  /** Receives the client's log lines (default `console`). The site key is never passed to it. */
  readonly logger?: RampartLogger;

  // Tuning; the defaults suit production.
  /** A snapshot download that receives nothing for this long is abandoned (RAMPART_SYNC_TIMEOUT_MS, default 30000). */
  readonly syncTimeoutMs?: number;
  /** Longest wait between two failed polls (RAMPART_SYNC_BACKOFF_MAX_MS, default 300000). */
  readonly syncBackoffMaxMs?: number;
  /** Attempts per report batch before it is dropped (RAMPART_REPORT_MAX_ATTEMPTS, default 5). */
  readonly reportMaxAttempts?: number;
  /** Rate-limit keys held per process; least recently used are evicted (RAMPART_RATE_LIMIT_CAPACITY, default 100000). */
  readonly rateLimitCapacity?: number;
  /**
   * Client addresses whose range lookups the evaluator remembers, per snapshot
   * (RAMPART_ADDRESS_MEMO, default 16384, about 1.5 MB; 0 turns it off).
   */
  readonly addressMemo?: number;
  /**
   * Raw field values (paths, user agents, hosts, headers) whose pattern-rule results the evaluator
   * remembers, per field and snapshot (RAMPART_FIELD_MEMO, default 1024; 0 turns it off). Values
   * over 512 characters are never remembered.
   */
  readonly fieldMemo?: number;
  /**
   * When requests are evaluated (RAMPART_EVALUATION, default `batched`). `batched`: under load,
   * the requests that reach the middleware in one turn of the event loop are evaluated together
   * at its end (`setImmediate`), then continue in arrival order, which keeps the evaluator's code
   * and tables in the CPU caches from one evaluation to the next (most of its cost); a lone
   * request is evaluated at once (see `middleware/verdict-batch.ts`). `inline`: each request is
   * evaluated when it arrives and `next()` is called before the middleware returns, for code
   * that relies on that.
   */
  readonly evaluation?: Evaluation;
  /** Snapshot files kept in the data directory besides the current one (RAMPART_SNAPSHOT_RETENTION, default 3). */
  readonly snapshotRetention?: number;
  /** Longest `close()` spends flushing reports (RAMPART_CLOSE_TIMEOUT_MS, default 5000). */
  readonly closeTimeoutMs?: number;
  /** Where `RAMPART_*` variables are read from (default `process.env`; tests pass their own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The validated configuration: every option resolved. */
export interface RampartConfig {
  readonly hubUrl: string;
  readonly siteKey: string;
  readonly dataDir: string;
  readonly syncIntervalMs: number;
  readonly syncEveryRequests: number;
  readonly syncWaitMs: number;
  readonly syncDeltas: boolean;
  readonly failMode: FailMode;
  readonly trustedProxies: readonly string[];
  readonly blockResponse: BlockResponse;
  readonly reportBatchSize: number;
  readonly reportIntervalMs: number;
  readonly reportQueueSize: number;
  readonly passSampleRate: number;
  readonly mode: RampartMode;
  readonly rateLimitHeaders: RateLimitHeaders;
  readonly reportUrl: string;
  readonly instanceId: string;
  readonly syncTimeoutMs: number;
  readonly syncBackoffMaxMs: number;
  readonly reportMaxAttempts: number;
  readonly rateLimitCapacity: number;
  readonly addressMemo: number;
  readonly fieldMemo: number;
  readonly evaluation: Evaluation;
  readonly snapshotRetention: number;
  readonly closeTimeoutMs: number;
}

/** Every problem of a configuration, one per line, each naming the option and its variable. */
export class RampartConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid Rampart configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'RampartConfigError';
  }
}

export const DEFAULT_BLOCK_BODY = 'Forbidden (request id {requestId})\n';

/** What the hub accepts in `X-Rampart-Instance`. */
const INSTANCE_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;

type Env = Readonly<Record<string, string | undefined>>;

/** Resolves and validates options over the environment; throws {@link RampartConfigError}. */
export function resolveConfig(options: RampartOptions = {}): RampartConfig {
  const env: Env = options.env ?? process.env;
  const problems: string[] = [];
  const read = new Reader(env, problems);

  const mode = read.choice(
    'mode',
    'RAMPART_MODE',
    options.mode,
    ['off', 'monitor', 'enforce'],
    'enforce',
  );
  const hubUrl = read.url('hubUrl', 'RAMPART_HUB_URL', options.hubUrl, mode !== 'off');
  const siteKey = read.siteKey(options.siteKey, mode !== 'off');
  const reportUrl =
    read.url('reportUrl', 'RAMPART_REPORT_URL', options.reportUrl, false) ||
    (hubUrl ? `${hubUrl}/v1/reports` : '');
  const status = read.integer(
    'blockResponse.status',
    'RAMPART_BLOCK_STATUS',
    options.blockResponse?.status,
    403,
    400,
    599,
  );
  const body = options.blockResponse?.body ?? env.RAMPART_BLOCK_BODY ?? DEFAULT_BLOCK_BODY;
  const headers = read.headers(options.blockResponse?.headers);
  const instanceId = options.instanceId ?? env.RAMPART_INSTANCE_ID ?? defaultInstanceId();
  if (!INSTANCE_ID.test(instanceId)) {
    problems.push(
      `instanceId (RAMPART_INSTANCE_ID): must be 1-128 characters of A-Z a-z 0-9 _ . : @ -, got ${JSON.stringify(instanceId)}`,
    );
  }

  const config: RampartConfig = {
    mode,
    hubUrl,
    siteKey,
    reportUrl,
    dataDir: read.text('dataDir', 'RAMPART_DATA_DIR', options.dataDir, './.rampart'),
    syncIntervalMs: read.integer(
      'syncIntervalMs',
      'RAMPART_SYNC_INTERVAL_MS',
      options.syncIntervalMs,
      30_000,
      100,
      86_400_000,
    ),
    syncEveryRequests: read.integer(
      'syncEveryRequests',
      'RAMPART_SYNC_EVERY_REQUESTS',
      options.syncEveryRequests,
      10_000,
      0,
      1e9,
    ),
    syncWaitMs: read.integer(
      'syncWaitMs',
      'RAMPART_SYNC_WAIT_MS',
      options.syncWaitMs,
      30_000,
      0,
      600_000,
    ),
    syncDeltas: read.flag('syncDeltas', 'RAMPART_SYNC_DELTAS', options.syncDeltas, true),
    failMode: read.choice(
      'failMode',
      'RAMPART_FAIL_MODE',
      options.failMode,
      ['open', 'closed'],
      'open',
    ),
    evaluation: read.choice(
      'evaluation',
      'RAMPART_EVALUATION',
      options.evaluation,
      ['batched', 'inline'],
      'batched',
    ),
    rateLimitHeaders: read.choice(
      'rateLimitHeaders',
      'RAMPART_RATE_LIMIT_HEADERS',
      options.rateLimitHeaders,
      ['refusals', 'all'],
      'refusals',
    ),
    trustedProxies: read.cidrs(options.trustedProxies),
    blockResponse: { status, body, headers },
    reportBatchSize: read.integer(
      'reportBatchSize',
      'RAMPART_REPORT_BATCH_SIZE',
      options.reportBatchSize,
      250,
      1,
      100_000,
    ),
    reportIntervalMs: read.integer(
      'reportIntervalMs',
      'RAMPART_REPORT_INTERVAL_MS',
      options.reportIntervalMs,
      5_000,
      10,
      3_600_000,
    ),
    reportQueueSize: read.integer(
      'reportQueueSize',
      'RAMPART_REPORT_QUEUE_SIZE',
      options.reportQueueSize,
      10_000,
      1,
      10_000_000,
    ),
    passSampleRate: read.fraction(
      'passSampleRate',
      'RAMPART_PASS_SAMPLE_RATE',
      options.passSampleRate,
      0.01,
    ),
    instanceId,
    syncTimeoutMs: read.integer(
      'syncTimeoutMs',
      'RAMPART_SYNC_TIMEOUT_MS',
      options.syncTimeoutMs,
      30_000,
      100,
      3_600_000,
    ),
    syncBackoffMaxMs: read.integer(
      'syncBackoffMaxMs',
      'RAMPART_SYNC_BACKOFF_MAX_MS',
      options.syncBackoffMaxMs,
      300_000,
      100,
      86_400_000,
    ),
    reportMaxAttempts: read.integer(
      'reportMaxAttempts',
      'RAMPART_REPORT_MAX_ATTEMPTS',
      options.reportMaxAttempts,
      5,
      1,
      100,
    ),
    rateLimitCapacity: read.integer(
      'rateLimitCapacity',
      'RAMPART_RATE_LIMIT_CAPACITY',
      options.rateLimitCapacity,
      100_000,
      1,
      100_000_000,
    ),
    addressMemo: read.integer(
      'addressMemo',
      'RAMPART_ADDRESS_MEMO',
      options.addressMemo,
      DEFAULT_ADDRESS_MEMO,
      0,
      10_000_000,
    ),
    fieldMemo: read.integer(
      'fieldMemo',
      'RAMPART_FIELD_MEMO',
      options.fieldMemo,
      DEFAULT_FIELD_MEMO,
      0,
      1_000_000,
    ),
    snapshotRetention: read.integer(
      'snapshotRetention',
      'RAMPART_SNAPSHOT_RETENTION',
      options.snapshotRetention,
      3,
      0,
      1000,
    ),
    closeTimeoutMs: read.integer(
      'closeTimeoutMs',
      'RAMPART_CLOSE_TIMEOUT_MS',
      options.closeTimeoutMs,
      5_000,
      0,
      600_000,
    ),
  };
  if (problems.length > 0) throw new RampartConfigError(problems);
  return config;
}

/** `hostname:pid`, reduced to the characters the hub accepts. */
function defaultInstanceId(): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9_.@-]/g, '_')
    .slice(0, 100)}:${process.pid}`;
}

/** Reads one option from code or environment, recording problems instead of throwing. */
class Reader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  private fail(option: string, variable: string | null, reason: string, got: unknown): void {
    const where = variable ? `${option} (${variable})` : option;
    this.problems.push(`${where}: ${reason}, got ${JSON.stringify(got)}`);
  }

  text(option: string, variable: string, value: string | undefined, fallback: string): string {
    const raw = value ?? this.env[variable] ?? fallback;
    if (typeof raw !== 'string' || raw.trim() === '') {
      this.fail(option, variable, 'must be a non-empty string', raw);
      return fallback;
    }
    return raw;
  }

  choice<T extends string>(
    option: string,
    variable: string,
    value: T | undefined,
    allowed: readonly T[],
    fallback: T,
  ): T {
    const raw: unknown = value ?? this.env[variable] ?? fallback;
    if (!allowed.includes(raw as T)) {
      this.fail(option, variable, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`, raw);
      return fallback;
    }
    return raw as T;
  }

  flag(option: string, variable: string, value: boolean | undefined, fallback: boolean): boolean {
    if (value !== undefined) {
      if (typeof value === 'boolean') return value;
      this.fail(option, variable, 'must be true or false', value);
      return fallback;
    }
    const raw = this.env[variable]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.fail(option, variable, 'must be true or false', raw);
    return fallback;
  }

  integer(
    option: string,
    variable: string,
    value: number | undefined,
    fallback: number,
    min: number,
    max: number,
  ): number {
    const fromEnv = this.env[variable];
    const raw: unknown = value ?? (fromEnv === undefined || fromEnv === '' ? fallback : fromEnv);
    const n = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
      this.fail(option, variable, `must be an integer from ${min} to ${max}`, raw);
      return fallback;
    }
    return n;
  }

  fraction(option: string, variable: string, value: number | undefined, fallback: number): number {
    const fromEnv = this.env[variable];
    const raw: unknown = value ?? (fromEnv === undefined || fromEnv === '' ? fallback : fromEnv);
    const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 1) {
      this.fail(option, variable, 'must be a number from 0 to 1', raw);
      return fallback;
    }
    return n;
  }

  /** An http(s) URL without a trailing slash ('' when absent and not required). */
  url(option: string, variable: string, value: string | undefined, required: boolean): string {
    const raw: unknown = value ?? this.env[variable];
    if (raw === undefined || raw === '') {
      if (required) this.problems.push(`${option} (${variable}): is required`);
      return '';
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(String(raw));
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      this.fail(option, variable, 'must be an http:// or https:// URL', raw);
      return '';
    }
    if (parsed.username || parsed.password || parsed.search || parsed.hash) {
      this.problems.push(
        `${option} (${variable}): must not contain credentials, a query or a fragment (the site key goes in RAMPART_SITE_KEY)`,
      );
      return '';
    }
    return parsed.href.replace(/\/+$/, '');
  }

  /** The site key: required, printable, no whitespace. Its value never appears in a message. */
  siteKey(value: string | undefined, required: boolean): string {
    const raw: unknown = value ?? this.env.RAMPART_SITE_KEY;
    if (raw === undefined || raw === '') {
      if (required) this.problems.push('siteKey (RAMPART_SITE_KEY): is required');
      return '';
    }
    if (typeof raw !== 'string' || !/^[\x21-\x7e]{1,512}$/.test(raw)) {
      this.problems.push(
        'siteKey (RAMPART_SITE_KEY): must be 1-512 printable ASCII characters without spaces (value not shown)',
      );
      return '';
    }
    return raw;
  }

  cidrs(value: readonly string[] | undefined): readonly string[] {
    const fromEnv = this.env.RAMPART_TRUSTED_PROXIES;
    const list =
      value ??
      (fromEnv
        ? fromEnv
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : []);
    if (!Array.isArray(list)) {
      this.fail('trustedProxies', 'RAMPART_TRUSTED_PROXIES', 'must be a list of CIDRs', list);
      return [];
    }
    for (const [i, entry] of list.entries()) {
      try {
        parseIpRange(String(entry));
      } catch (error) {
        this.problems.push(
          `trustedProxies[${i}] (RAMPART_TRUSTED_PROXIES): ${(error as Error).message}`,
        );
      }
    }
    return list;
  }

  headers(value: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, v] of Object.entries(value ?? {})) {
      if (
        !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) ||
        typeof v !== 'string' ||
        /[\r\n\0]/.test(v)
      ) {
        this.fail(
          `blockResponse.headers[${JSON.stringify(name)}]`,
          null,
          'must be a valid header name and value',
          v,
        );
        continue;
      }
      headers[name.toLowerCase()] = v;
    }
    return headers;
  }
}
