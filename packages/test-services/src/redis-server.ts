/**
 * A throwaway redis-server for benchmarks and tests: loopback only, no persistence, its own temp
 * directory, stopped (and the directory removed) by `stop()`.
 *
 * Redis refuses `--port 0`, so a free port is found by letting the kernel pick one for a
 * short-lived Node listener, then handing that number to redis-server; if another process takes
 * the port in between, redis-server exits and the error says so. Readiness is a real `PING`
 * answered with `+PONG`, polled for a bounded time, never a sleep.
 *
 * Usage: `const redis = await startRedisServer(); try { ... redis.url ... } finally { await
 * redis.stop(); }`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerHandle {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Shuts the server down without saving, kills it if it does not exit, removes its directory. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** The executable; default `$REDIS_SERVER_BIN` or `redis-server` on the PATH. */
  readonly binary?: string;
  /** How long to wait for the first PONG; default 10 s. */
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
  const port = await findFreePort();
  const dir = await mkdtemp(join(tmpdir(), 'rampart-redis-'));
  const child = spawnServer(binary, port, dir, options.extraArgs ?? []);
  const exited = watchExit(child, binary, port);
  // Mark as handled now: after a successful start, an exit is expected (stop) or surfaces in the
  // client; before it, the race below still sees the rejection.
  exited.catch(() => {});
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  try {
    await Promise.race([waitForPong(port, options.readyTimeoutMs ?? 10_000), exited]);
  } catch (error) {
    child.kill('SIGKILL');
    process.removeListener('exit', kill);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://${HOST}:${port}`,
    port,
    stop: () => stopServer(child, port, dir).finally(() => process.removeListener('exit', kill)),
  };
}

/** A port the kernel considers free right now. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() =>
        port > 0 ? resolve(port) : reject(new Error('could not pick a free port')),
      );
    });
  });
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

async function waitForPong(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if ((await sendCommand(port, 'PING', 1000)) === '+PONG') return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${timeoutMs} ms (${String(last)})`,
  );
}

async function stopServer(child: ChildProcess, port: number, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // SHUTDOWN closes the connection instead of replying; any outcome is fine here.
    await sendCommand(port, 'SHUTDOWN NOSAVE', 2000).catch(() => {});
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  }
  await rm(dir, { recursive: true, force: true });
}
