/**
 * A throwaway redis-server for benchmarks and tests: loopback only, no persistence, its own temp
 * directory, stopped (and the directory removed) by `stop()`.
 *
 * Redis refuses `--port 0`, so a free port is found by letting the kernel pick one for a
 * short-lived Node listener, then handing that number to redis-server; if another process takes
 * the port in between, redis-server exits and the error says so. Readiness is a real `PING`
 * answered with `+PONG`, polled for a bounded time, never a sleep.
 *
 * Outages: `pause()` shuts the server process down for real (`SHUTDOWN NOSAVE`, SIGKILL if it
 * lingers), so clients see closed connections and `ECONNREFUSED`, exactly as when Redis dies;
 * `resume()` starts a new redis-server on the same port and directory and waits for its PONG.
 * Nothing is persisted, so the resumed server starts empty, like a restarted Redis without
 * persistence. (SIGSTOP/SIGCONT was not chosen: a stopped process keeps the port open and
 * connections hang instead of failing, which is a different failure mode.)
 *
 * Usage: `const redis = await startRedisServer(); try { ... redis.url ... } finally { await
 * redis.stop(); }`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay, findFreePort } from './free-port.js';

/** Kept here for existing importers; it lives in free-port.ts. */
export { findFreePort };

export interface RedisServerHandle {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /**
   * Simulates "Redis is down": shuts the process down (no save) and waits until it has exited,
   * so the port refuses connections. No-op when already paused or stopped.
   */
  pause(): Promise<void>;
  /**
   * Simulates "Redis is back": starts a fresh, empty redis-server on the same port and resolves
   * once it answers PING. No-op when running; rejects after `stop()`.
   */
  resume(): Promise<void>;
  /**
   * Shuts the server down without saving, kills it if it does not exit, removes its directory.
   * Idempotent: later calls return the same promise.
   */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** The executable; default `$REDIS_SERVER_BIN` or `redis-server` on the PATH. */
  readonly binary?: string;
  /** How long to wait for the first PONG (also after `resume()`); default 10 s. */
  readonly readyTimeoutMs?: number;
  /** Extra `--name value` arguments, e.g. `['--maxmemory', '1gb']`. */
  readonly extraArgs?: readonly string[];
}

const HOST = '127.0.0.1';

/** Starts redis-server and resolves once it answers PING. */
export async function startRedisServer(
  options: RedisServerOptions = {},
): Promise<RedisServerHandle> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const readyTimeoutMs = options.readyTimeoutMs ?? 10_000;
  const extra = options.extraArgs ?? [];
  const port = await findFreePort();
  const dir = await mkdtemp(join(tmpdir(), 'rampart-redis-'));

  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);

  /** Spawns redis-server and waits for its PONG; on failure the process is killed. */
  const launch = async (): Promise<void> => {
    const spawned = spawnServer(binary, port, dir, extra);
    child = spawned;
    const exited = watchExit(spawned, binary, port);
    // Mark as handled now: after a successful start, an exit is expected (pause/stop) or surfaces
    // in the client; before it, the race below still sees the rejection.
    exited.catch(() => {});
    const probe = new AbortController();
    try {
      await Promise.race([waitForPong(port, readyTimeoutMs, probe.signal), exited]);
    } catch (error) {
      await terminate(spawned, port, 0);
      throw error;
    } finally {
      probe.abort(); // Ends the PING loop when the exit won the race.
    }
  };

  // pause/resume/stop run one at a time, in call order.
  let queue: Promise<unknown> = Promise.resolve();
  const serialize = <T>(step: () => Promise<T>): Promise<T> => {
    const next = queue.then(step, step);
    queue = next.catch(() => {});
    return next;
  };
  let stopped: Promise<void> | undefined;
  let paused = false;

  try {
    await launch();
  } catch (error) {
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    url: `redis://${HOST}:${port}`,
    port,
    pause: () =>
      serialize(async () => {
        if (stopped || paused || !child) return;
        paused = true;
        await terminate(child, port, 3000);
      }),
    resume: () =>
      serialize(async () => {
        if (stopped) throw new Error(`redis-server on port ${port} was stopped; cannot resume`);
        if (!paused) return;
        await launch();
        paused = false;
      }),
    stop: () => {
      stopped ??= serialize(async () => {
        if (child) await terminate(child, port, 3000);
        await rm(dir, { recursive: true, force: true });
      }).finally(() => process.removeListener('exit', killOnExit));
      return stopped;
    },
  };
}

function spawnServer(
  binary: string,
  port: number,
  dir: string,
  extra: readonly string[],
): ChildProcess {
  const args = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--loglevel',
    'warning',
    ...extra,
  ];
  const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.resume(); // Drain: a full pipe would block the server.
  return child;
}

/**
 * Rejects with a readable message when the server cannot start (binary missing, port taken,
 * bad flag), and never resolves otherwise: it races the readiness probe.
 */
function watchExit(child: ChildProcess, binary: string, port: number): Promise<never> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  return new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new Error(
              `redis-server not found (tried ${JSON.stringify(binary)}): install it (e.g. apt-get install redis-server) or set REDIS_SERVER_BIN`,
            )
          : error,
      );
    });
    child.once('exit', (code, signal) => {
      reject(
        new Error(
          `redis-server on port ${port} exited early (${signal ?? `code ${code}`}): ${stderr.trim()}`,
        ),
      );
    });
  });
}

/** Sends one inline command and resolves with the first reply line (without CRLF). */
function sendCommand(port: number, command: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: HOST, port });
    let reply = '';
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`no reply to ${command} within ${timeoutMs} ms`)),
    );
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const eol = reply.indexOf('\r\n');
      if (eol !== -1) {
        socket.end();
        resolve(reply.slice(0, eol));
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed before a reply to ${command}`)));
  });
}

async function waitForPong(port: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      if ((await sendCommand(port, 'PING', 1000)) === '+PONG') return;
    } catch (error) {
      last = error;
    }
    await delay(25, signal);
  }
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${timeoutMs} ms (${String(last)})`,
  );
}

/**
 * Ends the process and resolves once it has exited: `SHUTDOWN NOSAVE` first when `graceMs` > 0,
 * SIGKILL once the grace period is over.
 */
async function terminate(child: ChildProcess, port: number, graceMs: number): Promise<void> {
  if (hasExited(child)) return;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A process that failed to spawn emits 'error' and never 'exit'.
  if (child.pid === undefined) return;
  if (graceMs > 0) {
    // SHUTDOWN closes the connection instead of replying; any outcome is fine here.
    void sendCommand(port, 'SHUTDOWN NOSAVE', graceMs).catch(() => {});
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exit;
  clearTimeout(timer);
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
