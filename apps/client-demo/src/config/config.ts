/**
 * The demo's configuration: environment variables, validated once at start.
 *
 * `loadConfig` reads `DEMO_*` and throws a {@link ConfigError} naming every bad variable at once,
 * so a typo stops the process before it listens, with one readable line. Secrets (the session
 * secret, credentials inside DEMO_DATABASE_URL) are never echoed back.
 *
 * The WAF's own variables (`RAMPART_MODE`, `RAMPART_HUB_URL`, `RAMPART_SITE_KEY`,
 * `RAMPART_DATA_DIR`, ...) are read and validated by `@rampart/waf-client` itself; the demo only
 * looks at `RAMPART_DATA_DIR` to default it to a folder inside its own data directory.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface DemoConfig {
  readonly host: string;
  readonly port: number;
  /** Absolute path: the SQLite file, the generated session secret and the WAF's snapshots. */
  readonly dataDir: string;
  /** A postgres:// URL, or null for the embedded SQLite file in the data directory. */
  readonly databaseUrl: string | null;
  /** Connections of the PostgreSQL pool. */
  readonly databasePoolMax: number;
  /** At least 32 characters; signs the session cookie. */
  readonly sessionSecret: string;
  /** Where the session secret came from (for the start-up log; never the secret itself). */
  readonly sessionSecretSource: 'env' | 'file';
  /** Session lifetime in seconds. */
  readonly sessionMaxAgeSeconds: number;
  /** Whether the session cookie carries `Secure` (set it when served over HTTPS). */
  readonly secureCookies: boolean;
  /** Express `trust proxy` for `req.ip` and `req.protocol` (the WAF has its own `trustedProxies`). */
  readonly trustProxy: boolean;
  readonly logRequests: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid client-demo configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const MIN_SECRET_LENGTH = 32;

/** Validates `env` and resolves defaults; creates the data directory (and a dev session secret). */
export function loadConfig(env: Env = process.env): DemoConfig {
  const problems: string[] = [];
  const read = new Reader(env, problems);
  const host = read.string('DEMO_HOST', '127.0.0.1');
  const port = read.integer('DEMO_PORT', 3000, 0, 65535);
  const dataDir = resolve(read.string('DEMO_DATA_DIR', '.data'));
  const databaseUrl = read.optional('DEMO_DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\/.+/.test(databaseUrl))
    problems.push('DEMO_DATABASE_URL must be a postgres:// URL (or unset for SQLite)');
  const databasePoolMax = read.integer('DEMO_DATABASE_POOL_MAX', 5, 1, 100);
  const envSecret = read.optional('DEMO_SESSION_SECRET');
  if (envSecret !== undefined && envSecret.length < MIN_SECRET_LENGTH)
    problems.push(`DEMO_SESSION_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  const sessionMaxAgeSeconds = read.integer('DEMO_SESSION_MAX_AGE', 8 * 3600, 60, 30 * 86400);
  const secureCookies = read.boolean('DEMO_SECURE_COOKIES', false);
  const trustProxy = read.boolean('DEMO_TRUST_PROXY', false);
  const logRequests = read.boolean('DEMO_LOG_REQUESTS', false);
  // The demo listens on plain HTTP: a Secure cookie can only be set on a request that a TLS
  // proxy in front of it forwarded (X-Forwarded-Proto: https), which only a trusted proxy says.
  if (secureCookies && !trustProxy)
    problems.push('DEMO_SECURE_COOKIES=true needs DEMO_TRUST_PROXY=true (a TLS proxy in front)');
  if (problems.length > 0) throw new ConfigError(problems);

  mkdirSync(dataDir, { recursive: true });
  return {
    host,
    port,
    dataDir,
    databaseUrl: databaseUrl ?? null,
    databasePoolMax,
    sessionSecret: envSecret ?? devSessionSecret(dataDir),
    sessionSecretSource: envSecret === undefined ? 'file' : 'env',
    sessionMaxAgeSeconds,
    secureCookies,
    trustProxy,
    logRequests,
  };
}

/** The WAF's data directory: `RAMPART_DATA_DIR`, else `<data dir>/rampart`. */
export function wafDataDir(config: DemoConfig, env: Env = process.env): string {
  const fromEnv = env.RAMPART_DATA_DIR?.trim();
  return fromEnv ? resolve(fromEnv) : join(config.dataDir, 'rampart');
}

/**
 * A secret kept in `<data dir>/session-secret` (created once, mode 0600), so sessions survive
 * restarts without configuration. Several instances behind a load balancer must share one
 * secret: set DEMO_SESSION_SECRET for them.
 */
function devSessionSecret(dataDir: string): string {
  const file = join(dataDir, 'session-secret');
  if (!existsSync(file)) {
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < MIN_SECRET_LENGTH)
    throw new ConfigError([`${file} holds a secret shorter than ${MIN_SECRET_LENGTH} characters`]);
  return secret;
}

class Reader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  optional(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const text = this.optional(name);
    if (text === undefined) return fallback;
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${text}")`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const text = this.optional(name)?.toLowerCase();
    if (text === undefined) return fallback;
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    this.problems.push(`${name} must be true or false (got "${text}")`);
    return fallback;
  }
}
