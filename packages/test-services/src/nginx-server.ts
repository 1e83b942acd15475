/**
 * A throwaway nginx for benchmarks and tests: Debian's `nginx` binary with a configuration
 * written for the run into its own temp prefix (logs, temp paths, pid file), in the foreground
 * (`daemon off`), loopback only, stopped (and the directory removed) by `stop()`.
 *
 * The caller writes the `http { ... }` contents (its `server` blocks, listening on ports it chose
 * with `findFreePort`); this launcher adds the rest: worker count, optional modules, a pid file,
 * an error log and temp paths inside the prefix, `access_log off`. Readiness is every listed port
 * accepting a TCP connection, polled for a bounded time; an nginx that exits first (a bad
 * configuration) fails the start with its error log.
 *
 * `cpu` pins the master and its workers to one core (`taskset`), as a benchmark that gives the
 * load generator the other core needs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay } from './free-port.js';

/** Debian's dynamic module of `libnginx-mod-http-subs-filter` (`subs_filter`). */
export const SUBS_FILTER_MODULE = '/usr/lib/nginx/modules/ngx_http_subs_filter_module.so';

export interface NginxOptions {
  /** The body of the `http` block: `server { listen 127.0.0.1:PORT; ... }` and the like. */
  readonly http: string;
  /** Ports the configuration listens on: ready once each accepts a connection. */
  readonly ports: readonly number[];
  /** Directives of the main context, e.g. `pcre_jit on;`. */
  readonly main?: string;
  /** `worker_processes`; default 1. */
  readonly workers?: number;
  /** Absolute paths of dynamic modules to load, e.g. {@link SUBS_FILTER_MODULE}. */
  readonly modules?: readonly string[];
  /** Pin nginx to this core (taskset). */
  readonly cpu?: number;
  /** The executable; default `$NGINX_BIN` or `nginx` on the PATH. */
  readonly binary?: string;
  /** Default 10 s. */
  readonly readyTimeoutMs?: number;
}

export interface NginxHandle {
  /** The prefix directory (its `html/` is free for files to serve). */
  readonly prefix: string;
  readonly masterPid: number;
  /** The worker processes' ids (children of the master). */
  workerPids(): Promise<number[]>;
  /** Stops nginx (SIGQUIT, SIGKILL if it lingers) and removes the prefix. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

export async function startNginx(options: NginxOptions): Promise<NginxHandle> {
  const binary = options.binary ?? process.env.NGINX_BIN ?? 'nginx';
  const prefix = await mkdtemp(join(tmpdir(), 'rampart-nginx-'));
  // Workers of an nginx started as root run as `nobody`, and must read html/.
  await chmod(prefix, 0o755);
  await mkdir(join(prefix, 'html'), { mode: 0o755 });
  for (const module of options.modules ?? []) {
    if (!existsSync(module)) {
      await rm(prefix, { recursive: true, force: true });
      throw new Error(
        `nginx module ${module} is missing (apt-get install libnginx-mod-http-subs-filter)`,
      );
    }
  }
  const conf = [
    ...(options.modules ?? []).map((m) => `load_module ${m};`),
    'daemon off;',
    options.main ?? '',
    'master_process on;',
    `worker_processes ${options.workers ?? 1};`,
    `pid ${join(prefix, 'nginx.pid')};`,
    `error_log ${join(prefix, 'error.log')} warn;`,
    'events { worker_connections 4096; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (t) => `  ${t}_temp_path ${join(prefix, `${t}-temp`)};`,
    ),
    options.http,
    '}',
    '',
  ].join('\n');
  const confPath = join(prefix, 'nginx.conf');
  await writeFile(confPath, conf);
  const args = ['-p', prefix, '-c', confPath, '-e', join(prefix, 'error.log')];
  const child: ChildProcess =
    options.cpu === undefined
      ? spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn('taskset', ['-c', String(options.cpu), binary, ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGQUIT');
        const done = await Promise.race([exited, delay(5000).then(() => 'timeout' as const)]);
        if (done === 'timeout') {
          child.kill('SIGKILL');
          await exited;
        }
      }
      process.removeListener('exit', killOnExit);
      await rm(prefix, { recursive: true, force: true });
    })();
    return stopped;
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
  try {
    for (const port of options.ports) {
      while (!(await accepts(port))) {
        if (child.exitCode !== null) throw new Error('nginx exited during start');
        if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} in time`);
        await delay(50);
      }
    }
  } catch (error) {
    const log = await readFile(join(prefix, 'error.log'), 'utf8').catch(() => '');
    await stop();
    throw new Error(`${(error as Error).message}: ${(stderr + log).slice(-2000)}`);
  }

  return {
    prefix,
    masterPid: child.pid ?? -1,
    async workerPids() {
      const master = Number((await readFile(join(prefix, 'nginx.pid'), 'utf8')).trim());
      const pids: number[] = [];
      for (const entry of await readdir('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === master) pids.push(Number(entry));
      }
      return pids;
    },
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
