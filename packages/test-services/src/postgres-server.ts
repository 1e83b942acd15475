/**
 * A throwaway PostgreSQL server for tests: a fresh cluster (`initdb`) in its own temp directory
 * (under /dev/shm when available, see `baseDir`), listening on 127.0.0.1 only (plus a Unix socket
 * inside that directory), trust authentication for the superuser `rampart`, durability switched
 * off for speed, stopped (and the directory removed) by `stop()`.
 *
 * `postgres` is spawned directly (not through pg_ctl) so this process holds the postmaster and
 * can always kill it. PostgreSQL refuses to run as root: when this process is root, initdb and
 * postgres are spawned with the uid/gid of the `postgres` system user (the temp directory is
 * handed to that user); otherwise they run as the current user.
 *
 * The free port is picked by binding port 0 first (see `findFreePort`); readiness is a real
 * connection answering `SELECT 1`, polled for a bounded time.
 *
 * Usage: `const pg = await startPostgres(); try { ... pg.url ... } finally { await pg.stop(); }`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { delay, findFreePort } from './free-port.js';

export interface PostgresServerHandle {
  /** `postgres://rampart@127.0.0.1:<port>/<database>` */
  readonly url: string;
  readonly port: number;
  /** The database created at start-up (`options.database`). */
  readonly database: string;
  /** The superuser, `rampart` (no password: trust authentication). */
  readonly user: string;
  /** The Unix socket directory (also the cluster's temp root). */
  readonly socketDir: string;
  /** Creates another database on this server and resolves with its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Fast shutdown (SIGINT), SIGKILL if the server has not exited within 10 s, then removes the
   * temp directory. Idempotent: later calls return the same promise.
   */
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /** The database to create at start-up; default `rampart_test`. */
  readonly database?: string;
  /**
   * Directory holding `initdb` and `postgres`; default `$POSTGRES_BIN_DIR`, else
   * `pg_config --bindir` when it holds them, else the newest `/usr/lib/postgresql/<n>/bin`,
   * else the PATH.
   */
  readonly binDir?: string;
  /** How long to wait until the server accepts connections; default 20 s. */
  readonly readyTimeoutMs?: number;
  /** Extra server settings, passed as `-c name=value`. */
  readonly settings?: Readonly<Record<string, string>>;
  /**
   * Where the cluster's temp directory is created; default `/dev/shm` when it is a writable
   * directory (RAM: initdb and CREATE DATABASE are several times faster than on a slow disk),
   * else the OS temp directory.
   */
  readonly baseDir?: string;
}

const HOST = '127.0.0.1';
const USER = 'rampart';
const INITDB_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const execFileAsync = promisify(execFile);

/** Creates a fresh cluster, starts it, creates `options.database` and resolves with a handle. */
export async function startPostgres(
  options: PostgresServerOptions = {},
): Promise<PostgresServerHandle> {
  const database = options.database ?? 'rampart_test';
  const binDir = await findBinDir(options.binDir);
  const owner = await clusterOwner();
  const port = await findFreePort();
  const root = await mkdtemp(join(options.baseDir ?? (await defaultBaseDir()), 'rampart-pg-'));
  const dataDir = join(root, 'data');
  const spawnAs = { cwd: root, ...(owner ?? {}) };

  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);
  const cleanUp = async () => {
    if (child) await terminate(child);
    process.removeListener('exit', killOnExit);
    await rm(root, { recursive: true, force: true });
  };

  try {
    if (owner) await chown(root, owner.uid, owner.gid);
    await runInitdb(binDir, dataDir, spawnAs);
    const args = [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      root,
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
        '-c',
        `${name}=${value}`,
      ]),
    ];
    const spawned = spawn(join(binDir, 'postgres'), args, {
      ...spawnAs,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    const exited = watchExit(spawned, port);
    exited.catch(() => {}); // After start-up an exit is expected (stop); see redis-server.ts.
    const probe = new AbortController();
    try {
      const ready = waitForConnection(port, options.readyTimeoutMs ?? 20_000, probe.signal);
      await Promise.race([ready, exited]);
    } finally {
      probe.abort(); // Ends the connection loop when the exit won the race.
    }
    await createDatabase(port, database);
  } catch (error) {
    await cleanUp();
    throw error;
  }

  let stopped: Promise<void> | undefined;
  return {
    url: urlFor(port, database),
    port,
    database,
    user: USER,
    socketDir: root,
    createDatabase: async (name) => {
      await createDatabase(port, name);
      return urlFor(port, name);
    },
    stop: () => {
      stopped ??= cleanUp();
      return stopped;
    },
  };
}

async function defaultBaseDir(): Promise<string> {
  try {
    await access('/dev/shm', constants.W_OK | constants.X_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

function urlFor(port: number, database: string): string {
  return `postgres://${USER}@${HOST}:${port}/${encodeURIComponent(database)}`;
}

async function createDatabase(port: number, name: string): Promise<void> {
  const client = new pg.Client({ host: HOST, port, user: USER, database: 'postgres' });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/** Where `initdb` and `postgres` live; a readable error when PostgreSQL is not installed. */
async function findBinDir(explicit: string | undefined): Promise<string> {
  const chosen = explicit ?? process.env.POSTGRES_BIN_DIR;
  if (chosen) {
    if (await hasServerBinaries(chosen)) return chosen;
    throw new Error(`no initdb and postgres executables in ${JSON.stringify(chosen)}`);
  }
  const candidates: string[] = [];
  try {
    const { stdout } = await execFileAsync('pg_config', ['--bindir'], { timeout: 5000 });
    candidates.push(stdout.trim());
  } catch {
    // pg_config missing (or only libpq's): fall through to the Debian layout.
  }
  try {
    const versions = (await readdir('/usr/lib/postgresql'))
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // Not Debian-like.
  }
  for (const dir of candidates) if (await hasServerBinaries(dir)) return dir;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && (await hasServerBinaries(dir))) return dir;
  }
  throw new Error(
    'PostgreSQL server binaries (initdb, postgres) not found: install them (e.g. apt-get install postgresql) or set POSTGRES_BIN_DIR',
  );
}

async function hasServerBinaries(dir: string): Promise<boolean> {
  try {
    await access(join(dir, 'initdb'), constants.X_OK);
    await access(join(dir, 'postgres'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** As root, the uid/gid of the `postgres` system user (PostgreSQL refuses root); else none. */
async function clusterOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = async (flag: string) =>
      Number((await execFileAsync('id', [flag, 'postgres'], { timeout: 5000 })).stdout.trim());
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    throw new Error(
      'running as root, but there is no `postgres` system user to run PostgreSQL as (PostgreSQL refuses to run as root): install the postgresql package or run as a normal user',
    );
  }
}

async function runInitdb(
  binDir: string,
  dataDir: string,
  spawnAs: { cwd: string; uid?: number; gid?: number },
): Promise<void> {
  const args = [
    '-D',
    dataDir,
    '-U',
    USER,
    '--auth=trust',
    '--encoding=UTF8',
    '--no-locale',
    '--no-sync',
    '--no-instructions',
  ];
  try {
    await execFileAsync(join(binDir, 'initdb'), args, {
      ...spawnAs,
      timeout: INITDB_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
    });
  } catch (error) {
    const failure = error as { stderr?: string; killed?: boolean; message: string };
    const reason = failure.killed
      ? `timed out after ${INITDB_TIMEOUT_MS} ms`
      : (failure.stderr?.trim() ?? failure.message);
    throw new Error(`initdb failed: ${reason}`);
  }
}

/** Rejects with the server's last stderr lines when it exits (or fails to spawn). */
function watchExit(child: ChildProcess, port: number): Promise<never> {
  let stderr = '';
  child.stdout?.resume(); // Drain: a full pipe would block the server.
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  return new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      reject(
        new Error(
          `postgres on port ${port} exited early (${signal ?? `code ${code}`}): ${stderr.trim()}`,
        ),
      );
    });
  });
}

async function waitForConnection(
  port: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline && !signal.aborted) {
    const client = new pg.Client({
      host: HOST,
      port,
      user: USER,
      database: 'postgres',
      connectionTimeoutMillis: 1000,
    });
    client.on('error', () => {}); // A dropped connection must not crash the probe.
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      last = error;
    } finally {
      await client.end().catch(() => {});
    }
    await delay(25, signal);
  }
  throw new Error(
    `postgres on port ${port} did not accept connections within ${timeoutMs} ms (${String(last)})`,
  );
}

/** SIGINT (fast shutdown), SIGKILL after the grace period; resolves once the process exited. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exit;
  clearTimeout(timer);
}

/** A PostgreSQL server shared by the tests of one file, handing out a fresh database per call. */
export interface SharedPostgres {
  /** A new, empty database (the server starts on first use); resolves with its URL. */
  freshDatabase(): Promise<string>;
  /** Stops the server, if one was started (call it in the file's `afterAll`). */
  stop(): Promise<void>;
}

/**
 * One server per test file rather than per test: starting PostgreSQL takes seconds, creating a
 * database milliseconds. Database names are `<prefix>_<pid>_<n>`.
 */
export function sharedPostgres(prefix: string): SharedPostgres {
  let server: Promise<PostgresServerHandle> | undefined;
  let databases = 0;
  return {
    async freshDatabase() {
      server ??= startPostgres();
      databases++;
      return (await server).createDatabase(`${prefix}_${process.pid}_${databases}`);
    },
    async stop() {
      const running = server;
      server = undefined;
      if (running) await (await running).stop();
    },
  };
}
