/**
 * The report batch a WAF client sends (`POST /v1/reports`), and its validation.
 *
 * The format is the client's (waf-client README, "Reports"), version 1:
 * `{ version, batchId, instance, snapshotVersion, periodStart, periodEnd, passSampleRate,
 *    dropped, counts, events, signals?, rateLimitKeys?, addressCounts? }`.
 * - `counts`: every request the client saw in the period, per (action, mode, rule, outcome):
 *   exact, whatever was sampled.
 * - `events`: blocked, rate-limited and monitored requests, and a `passSampleRate` sample of the
 *   passed ones (`sampled: true`).
 * - `signals`: what only the app knows (failed and successful logins), never sampled; accounts
 *   only as keyed hashes.
 * - `rateLimitKeys`: requests per (rate-limit rule, key) in the period, for fleet-wide limits.
 * - `addressCounts`: requests per client address in the period, for request-rate detection.
 * - `batchId`: chosen by the client and kept across its retries, so a batch is counted once.
 * - `events[].traceparent` (optional): the trace of the request the event describes, when the
 *   app traces its requests; the dashboard shows that trace from Jaeger.
 *
 * A batch is accepted whole or not at all: `parseReportBatch` returns every problem, each
 * naming its field (`events[3].time`), and the endpoint stores nothing of a batch with one.
 */

export const ACTIONS = ['allow', 'block', 'rate_limit', 'pass', 'unevaluated'] as const;
export const MODES = ['enforce', 'monitor'] as const;
export const OUTCOMES = [
  'passed',
  'blocked',
  'rate_limited',
  'failed_open',
  'failed_closed',
] as const;
export const CATEGORIES = ['ip', 'country', 'asn', 'reputation', 'pattern', 'rate_limit'] as const;
export const SIGNAL_KINDS = ['login_failed', 'login_succeeded'] as const;

export type ReportAction = (typeof ACTIONS)[number];
export type ReportMode = (typeof MODES)[number];
export type ReportOutcome = (typeof OUTCOMES)[number];
export type ReportCategory = (typeof CATEGORIES)[number];
export type SignalKind = (typeof SIGNAL_KINDS)[number];

/** How many of each a batch may carry (a client sends 250 events per batch by default). */
export const LIMITS = Object.freeze({
  counts: 2000,
  events: 10_000,
  signals: 10_000,
  rateLimitKeys: 10_000,
  addressCounts: 10_000,
  text: { id: 128, ip: 64, method: 16, host: 256, path: 1024, userAgent: 512, key: 512 },
});

export interface CountEntry {
  readonly action: ReportAction;
  readonly mode: ReportMode;
  readonly ruleId: string | null;
  readonly outcome: ReportOutcome;
  readonly count: number;
}

export interface ReportEvent {
  readonly requestId: string;
  readonly time: string;
  readonly ip: string;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly userAgent: string;
  readonly action: ReportAction;
  readonly mode: ReportMode;
  readonly outcome: ReportOutcome;
  readonly ruleId: string | null;
  readonly category: ReportCategory | null;
  readonly monitoredRuleId: string | null;
  readonly snapshotVersion: number | null;
  readonly sampled: boolean;
  /** The W3C `traceparent` of the request's span when the app traced it; null otherwise. */
  readonly traceparent: string | null;
}

export interface SignalEvent {
  readonly kind: SignalKind;
  readonly requestId: string;
  readonly time: string;
  readonly ip: string;
  readonly path: string;
  readonly userAgent: string;
  /** HMAC-SHA256 of the account under the site's signal key, hex; null when none was given. */
  readonly account: string | null;
}

export interface RateLimitKeyCount {
  readonly ruleId: string;
  /** The rate-limit key as the client computed it (an address, address + path, or a header). */
  readonly key: string;
  readonly count: number;
}

export interface AddressCount {
  readonly ip: string;
  readonly count: number;
}

export interface ReportBatch {
  readonly version: 1;
  readonly batchId: string;
  readonly instance: string;
  readonly snapshotVersion: number | null;
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly passSampleRate: number;
  readonly dropped: number;
  readonly counts: readonly CountEntry[];
  readonly events: readonly ReportEvent[];
  readonly signals: readonly SignalEvent[];
  readonly rateLimitKeys: readonly RateLimitKeyCount[];
  readonly addressCounts: readonly AddressCount[];
}

export interface BatchIssue {
  /** The field, as a path into the batch: `events[3].time`. */
  readonly field: string;
  readonly reason: string;
}

export type ParsedBatch =
  | { readonly ok: true; readonly batch: ReportBatch }
  | { readonly ok: false; readonly issues: readonly BatchIssue[] };

export const BATCH_ID = /^[A-Za-z0-9_-]{8,64}$/;
export const HEX_256 = /^[0-9a-f]{64}$/;
/** A W3C `traceparent` (version 00): trace id, parent span id, flags, in lower-case hex. */
export const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** An ISO 8601 date-time with seconds and a zone, exactly as far as `Date.parse` reads it. */
export const ISO_TIME =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?|24:00:00(\.0{1,9})?)(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/**
 * `toISOString`'s own form on days 1 to 28, which no month rolls over: such a time is valid and
 * already what {@link utcTime} returns. Every time a client sends has that form, and checking it
 * costs a twentieth of parsing and writing the date again (a batch has thousands).
 */
const CANONICAL_TIME =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * An ISO 8601 date-time ({@link ISO_TIME}) in UTC as `toISOString` writes it, or undefined when
 * `value` is not one. Days past the end of a month roll over as `Date.parse` reads them
 * (`2026-02-30` is 2 March).
 */
export function utcTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (CANONICAL_TIME.test(value)) return value;
  const ms = Date.parse(value);
  return ISO_TIME.test(value) && !Number.isNaN(ms) ? new Date(ms).toISOString() : undefined;
}

/** Checks an untrusted, parsed JSON body; returns the batch or every problem found. */
export function parseReportBatch(raw: unknown): ParsedBatch {
  const issues: BatchIssue[] = [];
  const read = new Reader(issues);
  if (!isObject(raw))
    return { ok: false, issues: [{ field: '(body)', reason: 'must be a JSON object' }] };
  read.only(raw, '', [
    'version',
    'batchId',
    'instance',
    'snapshotVersion',
    'periodStart',
    'periodEnd',
    'passSampleRate',
    'dropped',
    'counts',
    'events',
    'signals',
    'rateLimitKeys',
    'addressCounts',
  ]);
  if (raw.version !== 1) issues.push({ field: 'version', reason: 'must be 1' });
  const batchId = read.text(raw, 'batchId', '', 64, BATCH_ID, '8-64 characters of A-Z a-z 0-9 _ -');
  const instance = read.text(raw, 'instance', '', LIMITS.text.id);
  const snapshotVersion = read.version(raw, 'snapshotVersion', '');
  const periodStart = read.time(raw, 'periodStart', '');
  const periodEnd = read.time(raw, 'periodEnd', '');
  if (periodStart && periodEnd && Date.parse(periodEnd) < Date.parse(periodStart))
    issues.push({ field: 'periodEnd', reason: 'must not be before periodStart' });
  const passSampleRate = read.number(raw, 'passSampleRate', '', 0, 1);
  const dropped = read.count(raw, 'dropped', '');
  const counts = read.list(
    raw,
    'counts',
    LIMITS.counts,
    true,
    (item, at) => ({
      action: read.choice(item, 'action', at, ACTIONS),
      mode: read.choice(item, 'mode', at, MODES),
      ruleId: read.nullableText(item, 'ruleId', at, LIMITS.text.id),
      outcome: read.choice(item, 'outcome', at, OUTCOMES),
      count: read.count(item, 'count', at),
    }),
    ['action', 'mode', 'ruleId', 'outcome', 'count'],
  );
  const events = read.list(
    raw,
    'events',
    LIMITS.events,
    true,
    (item, at) => ({
      requestId: read.text(item, 'requestId', at, LIMITS.text.id),
      time: read.time(item, 'time', at),
      // Empty when the client could not tell the address (a broken request): still counted.
      ip: read.text(item, 'ip', at, LIMITS.text.ip, undefined, undefined, true),
      method: read.text(item, 'method', at, LIMITS.text.method),
      host: read.text(item, 'host', at, LIMITS.text.host, undefined, undefined, true),
      path: read.text(item, 'path', at, LIMITS.text.path, undefined, undefined, true),
      userAgent: read.text(
        item,
        'userAgent',
        at,
        LIMITS.text.userAgent,
        undefined,
        undefined,
        true,
      ),
      action: read.choice(item, 'action', at, ACTIONS),
      mode: read.choice(item, 'mode', at, MODES),
      outcome: read.choice(item, 'outcome', at, OUTCOMES),
      ruleId: read.nullableText(item, 'ruleId', at, LIMITS.text.id),
      category: read.nullableChoice(item, 'category', at, CATEGORIES),
      monitoredRuleId: read.nullableText(item, 'monitoredRuleId', at, LIMITS.text.id),
      snapshotVersion: read.version(item, 'snapshotVersion', at),
      sampled: read.boolean(item, 'sampled', at),
      // Optional: clients before tracing, and apps without it, send none.
      traceparent:
        item.traceparent === undefined
          ? null
          : read.nullableText(
              item,
              'traceparent',
              at,
              55,
              TRACEPARENT,
              'a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)',
            ),
    }),
    [
      'requestId',
      'time',
      'ip',
      'method',
      'host',
      'path',
      'userAgent',
      'action',
      'mode',
      'outcome',
      'ruleId',
      'category',
      'monitoredRuleId',
      'snapshotVersion',
      'sampled',
      'traceparent',
    ],
  );
  const signals = read.list(
    raw,
    'signals',
    LIMITS.signals,
    false,
    (item, at) => ({
      kind: read.choice(item, 'kind', at, SIGNAL_KINDS),
      requestId: read.text(item, 'requestId', at, LIMITS.text.id),
      time: read.time(item, 'time', at),
      ip: read.text(item, 'ip', at, LIMITS.text.ip, undefined, undefined, true),
      path: read.text(item, 'path', at, LIMITS.text.path, undefined, undefined, true),
      userAgent: read.text(
        item,
        'userAgent',
        at,
        LIMITS.text.userAgent,
        undefined,
        undefined,
        true,
      ),
      account: read.nullableText(
        item,
        'account',
        at,
        64,
        HEX_256,
        '64 lower-case hex digits (an HMAC-SHA256)',
      ),
    }),
    ['kind', 'requestId', 'time', 'ip', 'path', 'userAgent', 'account'],
  );
  const rateLimitKeys = read.list(
    raw,
    'rateLimitKeys',
    LIMITS.rateLimitKeys,
    false,
    (item, at) => ({
      ruleId: read.text(item, 'ruleId', at, LIMITS.text.id),
      key: read.text(item, 'key', at, LIMITS.text.key),
      count: read.count(item, 'count', at),
    }),
    ['ruleId', 'key', 'count'],
  );
  const addressCounts = read.list(
    raw,
    'addressCounts',
    LIMITS.addressCounts,
    false,
    (item, at) => ({
      ip: read.text(item, 'ip', at, LIMITS.text.ip),
      count: read.count(item, 'count', at),
    }),
    ['ip', 'count'],
  );
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    batch: {
      version: 1,
      batchId,
      instance,
      snapshotVersion,
      periodStart,
      periodEnd,
      passSampleRate,
      dropped,
      counts,
      events,
      signals,
      rateLimitKeys,
      addressCounts,
    },
  };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Field readers that record a problem and return a placeholder, so every problem is found. */
class Reader {
  constructor(private readonly issues: BatchIssue[]) {}

  private fail(at: string, field: string, reason: string): void {
    this.issues.push({ field: at ? `${at}.${field}` : field, reason });
  }

  only(object: Json, at: string, keys: readonly string[]): void {
    for (const key of Object.keys(object))
      if (!keys.includes(key)) this.fail(at, key, 'is not a field of a report batch');
  }

  text(
    object: Json,
    field: string,
    at: string,
    max: number,
    pattern?: RegExp,
    patternText?: string,
    emptyAllowed = false,
  ): string {
    const value = object[field];
    if (typeof value !== 'string') {
      this.fail(at, field, 'must be a string');
      return '';
    }
    // Characters as JSON Schema counts them (code points), so the document's maxLength holds;
    // counted only when the UTF-16 length is over, which they can only be then.
    if (!emptyAllowed && value.length === 0) this.fail(at, field, 'must not be empty');
    else if (value.length > max && [...value].length > max)
      this.fail(at, field, `must be at most ${max} characters`);
    else if (pattern && !pattern.test(value)) this.fail(at, field, `must be ${patternText}`);
    return value;
  }

  nullableText(
    object: Json,
    field: string,
    at: string,
    max: number,
    pattern?: RegExp,
    patternText?: string,
  ): string | null {
    if (object[field] === null) return null;
    return this.text(object, field, at, max, pattern, patternText);
  }

  choice<T extends string>(object: Json, field: string, at: string, allowed: readonly T[]): T {
    const value = object[field];
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      this.fail(at, field, `must be one of ${allowed.join(', ')}`);
      return allowed[0] as T;
    }
    return value as T;
  }

  nullableChoice<T extends string>(
    object: Json,
    field: string,
    at: string,
    allowed: readonly T[],
  ): T | null {
    if (object[field] === null) return null;
    return this.choice(object, field, at, allowed);
  }

  time(object: Json, field: string, at: string): string {
    const utc = utcTime(object[field]);
    if (utc !== undefined) return utc;
    this.fail(at, field, 'must be an ISO 8601 date-time such as 2026-12-01T12:00:00.000Z');
    return '';
  }

  count(object: Json, field: string, at: string): number {
    const value = object[field];
    if (!Number.isSafeInteger(value) || (value as number) < 0) {
      this.fail(at, field, 'must be a whole number from 0');
      return 0;
    }
    return value as number;
  }

  version(object: Json, field: string, at: string): number | null {
    const value = object[field];
    if (value === null) return null;
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      this.fail(at, field, 'must be a snapshot version (a whole number from 1) or null');
      return null;
    }
    return value as number;
  }

  number(object: Json, field: string, at: string, min: number, max: number): number {
    const value = object[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      this.fail(at, field, `must be a number from ${min} to ${max}`);
      return min;
    }
    return value;
  }

  boolean(object: Json, field: string, at: string): boolean {
    const value = object[field];
    if (typeof value !== 'boolean') this.fail(at, field, 'must be true or false');
    return value === true;
  }

  list<T>(
    object: Json,
    field: string,
    max: number,
    required: boolean,
    item: (entry: Json, at: string) => T,
    keys: readonly string[],
  ): T[] {
    const value = object[field];
    if (value === undefined && !required) return [];
    if (!Array.isArray(value)) {
      this.fail('', field, 'must be an array');
      return [];
    }
    if (value.length > max) {
      this.fail('', field, `must have at most ${max} entries`);
      return [];
    }
    const out: T[] = [];
    value.forEach((entry, i) => {
      const at = `${field}[${i}]`;
      if (!isObject(entry)) {
        this.issues.push({ field: at, reason: 'must be an object' });
        return;
      }
      this.only(entry, at, keys);
      out.push(item(entry, at));
    });
    return out;
  }
}
