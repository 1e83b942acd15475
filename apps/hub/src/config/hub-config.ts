/**
 * The hub's configuration: environment variables, validated once at start.
 *
 * `validateEnvironment` is given to `ConfigModule.forRoot({ validate })`, so a bad value stops
 * the process before it listens, with one message naming every bad variable and why. Secrets
 * (the admin token, credentials inside DATABASE_URL / REDIS_URL) are never echoed back.
 */
import { resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;

/** The environment variables the hub reads, with their rules and defaults. */
export class HubEnvironment {
  /** Interface to listen on. Default 127.0.0.1: the hub is exposed deliberately, not by accident. */
  @IsString()
  HUB_HOST = '127.0.0.1';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  HUB_PORT = 4000;

  /** Where the embedded database, snapshots, datasets and uploads live. */
  @IsString()
  HUB_DATA_DIR = './data';

  /** `postgres://...` selects PostgreSQL; absent means the embedded SQLite file in the data dir. */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/.+/, {
    message: 'DATABASE_URL must be a postgres:// URL (or unset for SQLite)',
  })
  DATABASE_URL?: string;

  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL!: string;

  /** Bearer token of the management API; at least 32 characters. */
  @IsString()
  @MinLength(32, { message: 'HUB_ADMIN_TOKEN must be at least 32 characters' })
  HUB_ADMIN_TOKEN!: string;

  /** Largest dataset upload accepted (413 beyond). */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  HUB_MAX_UPLOAD_BYTES = 256 * 1024 * 1024;

  /** Largest JSON request body accepted (413 beyond). */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  HUB_MAX_JSON_BYTES = 2 * 1024 * 1024;

  /** Snapshot versions kept per site; older ones are garbage-collected. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  HUB_SNAPSHOT_RETENTION = 5;

  /** A burst of edits within this window makes one build. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  HUB_BUILD_DEBOUNCE_MS = 1000;

  /** How often sites whose rules changed without a build (Redis was down) are re-enqueued. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  HUB_RECONCILE_INTERVAL_MS = 5000;

  /** Blocking polls held at once; past it a poll is answered at once and waits on the client. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  HUB_MAX_HELD_POLLS = 10_000;

  /** The longest `wait` a blocking poll may ask for (longer ones are refused with 400). */
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(600_000)
  HUB_MAX_POLL_WAIT_MS = 60_000;

  /** Report batches waiting in the ingestion queue beyond which `POST /v1/reports` answers 503. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  HUB_REPORT_QUEUE_MAX = 10_000;

  /**
   * Report batches ingested at once by this instance. A batch's job ends only once its group is
   * committed, so this must cover two groups (up to 8 000 events each: 32 of the clients' usual
   * batches): the one being written and the next, taken from the queue and labelled meanwhile.
   * With 8 the two took turns: bench:ingest went from ~22 000 to ~34 000 events/s on PostgreSQL
   * and from ~27 000 to ~53 000 on SQLite with 64.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1024)
  HUB_INGEST_CONCURRENCY = 64;

  /**
   * Raw events written per site and second of event time at most, the first to arrive (the
   * counters and top lists count every event): under attack, the sample for looking at stays a
   * sample instead of every event written only to be trimmed.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  HUB_EVENT_SAMPLE_PER_SECOND = 100;

  /** Raw events kept per site at most (the newest); older ones are deleted every minute. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  HUB_EVENT_RETENTION_COUNT = 100_000;

  /** Raw events older than this are deleted (hours). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 366)
  HUB_EVENT_RETENTION_HOURS = 24;

  /** How often the report tables are trimmed to their retention. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  HUB_RETENTION_INTERVAL_MS = 60_000;

  /** Per-minute counters older than this are deleted (days). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3660)
  HUB_TRAFFIC_RETENTION_DAYS = 14;

  /** How long a dashboard session lasts after login (hours); it ends sooner at logout. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 30)
  HUB_SESSION_HOURS = 12;

  /** Whether X-Forwarded-For from a reverse proxy in front of the hub is believed. */
  @IsIn(['true', 'false'])
  HUB_TRUST_PROXY: 'true' | 'false' = 'false';

  @IsIn(['debug', 'log', 'warn', 'error'])
  HUB_LOG_LEVEL: 'debug' | 'log' | 'warn' | 'error' = 'log';

  /** Jaeger's query API, for the dashboard's traces of events (`http://127.0.0.1:16686`). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'HUB_JAEGER_QUERY_URL must be an http(s):// URL' })
  HUB_JAEGER_QUERY_URL?: string;

  /** Where people open Jaeger's UI (its trace pages); default the query URL. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'HUB_JAEGER_UI_URL must be an http(s):// URL' })
  HUB_JAEGER_UI_URL?: string;
}

/** For `ConfigModule.forRoot({ validate })`: throws one Error listing every bad variable. */
export function validateEnvironment(raw: Record<string, unknown>): HubEnvironment {
  const env = plainToInstance(HubEnvironment, raw, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false });
  if (errors.length > 0) {
    const reasons = errors.flatMap((e) =>
      Object.values(e.constraints ?? {}).map((message) =>
        message.startsWith(e.property) ? message : `${e.property}: ${message}`,
      ),
    );
    throw new Error(`invalid hub configuration: ${reasons.join('; ')}`);
  }
  return env;
}

/** The typed configuration the rest of the hub uses. */
export interface HubConfig {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly redisUrl: string;
  readonly adminToken: string;
  readonly maxUploadBytes: number;
  readonly maxJsonBytes: number;
  readonly snapshotRetention: number;
  readonly buildDebounceMs: number;
  readonly reconcileIntervalMs: number;
  readonly maxHeldPolls: number;
  readonly maxPollWaitMs: number;
  readonly reportQueueMax: number;
  readonly ingestConcurrency: number;
  readonly eventSamplePerSecond: number;
  readonly eventRetentionCount: number;
  readonly eventRetentionHours: number;
  readonly trafficRetentionDays: number;
  readonly retentionIntervalMs: number;
  readonly sessionHours: number;
  readonly trustProxy: boolean;
  readonly logLevel: HubEnvironment['HUB_LOG_LEVEL'];
  readonly jaegerQueryUrl: string | null;
  readonly jaegerUiUrl: string | null;
}

export function hubConfigFrom(env: HubEnvironment): HubConfig {
  return {
    host: env.HUB_HOST,
    port: env.HUB_PORT,
    dataDir: resolve(env.HUB_DATA_DIR),
    databaseUrl: env.DATABASE_URL ?? null,
    redisUrl: env.REDIS_URL,
    adminToken: env.HUB_ADMIN_TOKEN,
    maxUploadBytes: env.HUB_MAX_UPLOAD_BYTES,
    maxJsonBytes: env.HUB_MAX_JSON_BYTES,
    snapshotRetention: env.HUB_SNAPSHOT_RETENTION,
    buildDebounceMs: env.HUB_BUILD_DEBOUNCE_MS,
    reconcileIntervalMs: env.HUB_RECONCILE_INTERVAL_MS,
    maxHeldPolls: env.HUB_MAX_HELD_POLLS,
    maxPollWaitMs: env.HUB_MAX_POLL_WAIT_MS,
    reportQueueMax: env.HUB_REPORT_QUEUE_MAX,
    ingestConcurrency: env.HUB_INGEST_CONCURRENCY,
    eventSamplePerSecond: env.HUB_EVENT_SAMPLE_PER_SECOND,
    eventRetentionCount: env.HUB_EVENT_RETENTION_COUNT,
    eventRetentionHours: env.HUB_EVENT_RETENTION_HOURS,
    trafficRetentionDays: env.HUB_TRAFFIC_RETENTION_DAYS,
    retentionIntervalMs: env.HUB_RETENTION_INTERVAL_MS,
    sessionHours: env.HUB_SESSION_HOURS,
    trustProxy: env.HUB_TRUST_PROXY === 'true',
    logLevel: env.HUB_LOG_LEVEL,
    jaegerQueryUrl: env.HUB_JAEGER_QUERY_URL ?? null,
    jaegerUiUrl: env.HUB_JAEGER_UI_URL ?? null,
  };
}

/** Injection token of {@link HubConfig}. */
export const HUB_CONFIG = Symbol('HUB_CONFIG');
