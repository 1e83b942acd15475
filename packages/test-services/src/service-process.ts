/**
 * One of Rampart's own programs (the hub, the demo app, later prexy) as a child process for
 * integration tests and benchmarks: the one launcher they all go through.
 *
 * - Started with `node <main>` and exactly the environment given (nothing inherited), on a
 *   loopback port chosen before the start, so it can be stopped and started again on the same
 *   address ("the hub is down", "the hub is back").
 * - Ready means an HTTP 200 from its readiness path, polled until a deadline; a process that
 *   exits first, or never answers, fails the start with the tail of its output.
 * - Standard output and error are collected over every run (`output()`), so a test can assert
 *   what was never written, and mirrored into a log file. `close()` scans the output for the
 *   `secrets` and removes the log, unless something went wrong: a failed start, a run that ended
 *   without being stopped, a stop that needed SIGKILL or a secret in the output keep the file,
 *   and its path is printed, so the failure can be read afterwards.
 * - `stop()` sends SIGTERM and SIGKILL after a grace period; every wait is bounded.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { delay } from './free-port.js';
import { waitForOk } from './http-get.js';
import { type NodeProcess, type SpawnNodeOptions, spawnNode } from './node-process.js';

const READY_TIMEOUT_MS = 45_000;
const STOP_GRACE_MS = 10_000;
const OUTPUT_TAIL = 4000;

export interface ServiceProcessOptions {
  /** A short name for messages and the log file: `hub`, `demo`. */
  readonly name: string;
  /** The program: a compiled entry point (see {@link compiledEntry}) or a benchmark's `.ts`. */
  readonly main: string;
  readonly args?: readonly string[];
  /** Node's options on its command line, before `main` (see {@link SpawnNodeOptions}). */
  readonly nodeArgs?: readonly string[];
  /** The whole environment of every run; it must make the program listen on `port`. */
  readonly env: Readonly<Record<string, string>>;
  /** The loopback port the program listens on. */
  readonly port: number;
  /** Pin the program to this core (a benchmark giving its load generator the other). */
  readonly cpu?: number;
  /** A path that answers 200 once the program serves, e.g. `/health/ready`. */
  readonly readyPath: string;
  /** Default 45 s. */
  readonly readyTimeoutMs?: number;
  /** Between SIGTERM and SIGKILL; default 10 s. */
  readonly stopGraceMs?: number;
  /** Strings that must never appear in the output; more can be added to `secrets` later. */
  readonly secrets?: Iterable<string>;
}

export interface ServiceProcess {
  readonly name: string;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The current run's process id; undefined while stopped. */
  readonly pid: number | undefined;
  /** Checked against the output by `close()`. */
  readonly secrets: Set<string>;
  /** Where the output is mirrored; kept after `close()` only when something failed. */
  readonly logFile: string;
  /** Everything every run wrote to stdout and stderr so far. */
  output(): string;
  /** Starts a run (again, on the same port) and resolves once it is ready. */
  start(): Promise<void>;
  /** Ends the current run: SIGTERM, SIGKILL after the grace period. Resolves with its exit code. */
  stop(): Promise<number | null>;
  /** Stops, then fails if the output holds a secret; removes the log unless something failed. */
  close(): Promise<void>;
}

/**
 * `<package>/dist/main.js` of a workspace package, resolved from this package's location (the
 * workspace links every package into the root `node_modules`). The package whose tests start
 * it lists it as a devDependency, so turbo builds it before those tests run.
 */
export function compiledEntry(packageName: string): string {
  const manifest = createRequire(import.meta.url).resolve(`${packageName}/package.json`);
  const main = join(dirname(manifest), 'dist', 'main.js');
  if (!existsSync(main)) {
    throw new Error(
      `${main} is missing: build it first (npx turbo run build --filter=${packageName})`,
    );
  }
  return main;
}

/** A random token of `length` URL-safe characters: an admin token, a session secret. */
export function randomToken(length = 48): string {
  return randomBytes(length).toString('base64url').slice(0, length);
}

/** The environment every run starts from: a PATH and a HOME, nothing else of the caller's. */
export function baseEnvironment(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };
}

/** Creates the launcher and starts the first run. */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const service = createServiceProcess(options);
  try {
    await service.start();
  } catch (error) {
    await service.close().catch(() => {});
    throw error;
  }
  return service;
}

/** The launcher without a run yet (see {@link startServiceProcess}). */
export function createServiceProcess(options: ServiceProcessOptions): ServiceProcess {
  if (!existsSync(options.main)) {
    throw new Error(
      `${options.main} is missing: build it first (npx turbo run build), then run the tests again`,
    );
  }
  const url = `http://127.0.0.1:${options.port}`;
  const secrets = new Set(options.secrets ?? []);
  const logDir = process.env.RAMPART_TEST_LOG_DIR ?? join(tmpdir(), 'rampart-test-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${options.name}-${options.port}-${Date.now()}.log`);
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  let earlier = '';
  let run: NodeProcess | undefined;
  let stopping = false;
  let failed: string | undefined;
  const fail = (reason: string) => {
    failed ??= reason;
  };

  const output = () => earlier + (run?.output() ?? '');

  const stop = async (): Promise<number | null> => {
    const current = run;
    if (!current) return null;
    stopping = true;
    const grace = options.stopGraceMs ?? STOP_GRACE_MS;
    const started = Date.now();
    const code = await current.stop(grace);
    if (Date.now() - started >= grace) fail(`${options.name} ignored SIGTERM for ${grace} ms`);
    else if (code !== 0 && current.child.signalCode !== 'SIGTERM')
      fail(`${options.name} exited with ${code ?? current.child.signalCode} when stopped`);
    earlier += current.output();
    run = undefined;
    stopping = false;
    return code;
  };

  const start = async (): Promise<void> => {
    if (run) throw new Error(`${options.name} is already running on ${url}`);
    const current = spawnNode(options.main, options.env, options);
    run = current;
    current.child.stdout?.pipe(log, { end: false });
    current.child.stderr?.pipe(log, { end: false });
    current.exited.then((code) => {
      if (stopping || run !== current) return;
      fail(`${options.name} exited by itself with ${code ?? current.child.signalCode}`);
      process.stderr.write(
        `[test-services] ${options.name} on ${url} exited by itself (${code ?? current.child.signalCode}); log: ${logFile}\n`,
      );
    });
    const timeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
    const outcome = await Promise.race([
      waitForOk(`${url}${options.readyPath}`, timeoutMs),
      current.exited.then((code) => `it exited during start-up with ${code}`),
    ]);
    if (outcome === 'ready') return;
    fail(`${options.name} did not start`);
    await stop();
    throw new Error(
      `${options.name} did not become ready on ${url}${options.readyPath}: ${outcome} (log: ${logFile}):\n${output().slice(-OUTPUT_TAIL)}`,
    );
  };

  return {
    name: options.name,
    url,
    port: options.port,
    get pid() {
      return run?.pid;
    },
    secrets,
    logFile,
    output,
    start,
    stop,
    async close() {
      await stop();
      const text = output();
      const leaked = [...secrets].filter((secret) => secret !== '' && text.includes(secret));
      if (leaked.length > 0) fail(`${options.name} wrote a secret to its output`);
      await new Promise<void>((resolve) => log.end(resolve));
      if (failed === undefined) rmSync(logFile, { force: true });
      else process.stderr.write(`[test-services] ${failed}; log kept: ${logFile}\n`);
      if (leaked.length > 0) {
        throw new Error(
          `${options.name}'s output contains ${leaked.length} secret(s) (${leaked.map((s) => `${s.slice(0, 6)}...`).join(', ')}); log: ${logFile}`,
        );
      }
    },
  };
}

export interface FinishedRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node <main>` with exactly `env` until it exits on its own, for programs expected to
 * refuse to start (a bad configuration); rejects if it is still running after `timeoutMs`.
 */
export async function runToExit(
  main: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 20_000,
): Promise<FinishedRun> {
  const run = spawnNode(main, env);
  let stdout = '';
  let stderr = '';
  run.child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  run.child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const code = await Promise.race([run.exited, delay(timeoutMs).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    await run.stop(0);
    throw new Error(`${main} was still running after ${timeoutMs} ms:\n${run.output()}`);
  }
  return { code, stdout, stderr };
}
