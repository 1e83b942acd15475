import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from './free-port.js';
import {
  baseEnvironment,
  createServiceProcess,
  runToExit,
  type ServiceProcessOptions,
  startServiceProcess,
} from './service-process.js';

const PROGRAM = fileURLToPath(new URL('./fixtures/http-program.mjs', import.meta.url));

let logDir: string;
const savedLogDir = process.env.RAMPART_TEST_LOG_DIR;
beforeAll(() => {
  logDir = mkdtempSync(join(tmpdir(), 'rampart-service-logs-'));
  process.env.RAMPART_TEST_LOG_DIR = logDir;
});
afterAll(() => {
  if (savedLogDir === undefined) delete process.env.RAMPART_TEST_LOG_DIR;
  else process.env.RAMPART_TEST_LOG_DIR = savedLogDir;
  rmSync(logDir, { recursive: true, force: true });
});

async function options(
  env: Record<string, string> = {},
  extra: Partial<ServiceProcessOptions> = {},
): Promise<ServiceProcessOptions> {
  const port = await findFreePort();
  return {
    name: 'program',
    main: PROGRAM,
    env: { ...baseEnvironment(), PORT: String(port), ...env },
    port,
    readyPath: '/ready',
    ...extra,
  };
}

const pidOf = async (url: string) => (await (await fetch(url)).text()).replace('pid ', '');

describe('startServiceProcess', () => {
  it('waits for the readiness path, not for the port, and stops with SIGTERM', async () => {
    const service = await startServiceProcess(await options({ READY_AFTER_MS: '400' }));
    try {
      expect(service.url).toBe(`http://127.0.0.1:${service.port}`);
      expect((await fetch(`${service.url}/ready`)).status).toBe(200);
      expect(await pidOf(service.url)).toBe(String(service.pid));
    } finally {
      await service.close();
    }
    expect(service.pid).toBeUndefined();
    expect(service.output()).toContain('stopping');
    expect(existsSync(service.logFile)).toBe(false);
  });

  it('starts again on the same port, keeping the output of every run', async () => {
    const service = await startServiceProcess(await options({ SAY: 'hello' }));
    try {
      const first = service.pid;
      await service.stop();
      await expect(fetch(service.url)).rejects.toThrow();
      await service.start();
      expect(service.pid).not.toBe(first);
      expect(await pidOf(service.url)).toBe(String(service.pid));
      expect(service.output().match(/hello/g)).toHaveLength(2);
    } finally {
      await service.close();
    }
  });

  it('fails a start that exits, with its output, and keeps the log', async () => {
    const settings = await options({ EXIT_AT_START: '78' });
    const error: Error = await startServiceProcess(settings).then(
      () => expect.fail('started'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/program did not become ready .*exited during start-up with 78/);
    expect(error.message).toContain('refusing to start');
    const log = /\(log: ([^)]+)\)/.exec(error.message)?.[1] ?? '';
    expect(readFileSync(log, 'utf8')).toContain('refusing to start');
  });

  it('fails a start that never gets ready within its deadline', async () => {
    const settings = await options({ READY_AFTER_MS: '60000' }, { readyTimeoutMs: 500 });
    await expect(startServiceProcess(settings)).rejects.toThrow(
      /not ready within 500 ms \(last: status 503\)/,
    );
  });

  it('kills a process that ignores SIGTERM after the grace period, and keeps its log', async () => {
    const service = await startServiceProcess(
      await options({ IGNORE_SIGTERM: '1' }, { stopGraceMs: 300 }),
    );
    const started = Date.now();
    await service.close();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(existsSync(service.logFile)).toBe(true);
  });

  it('keeps the log of a run that ended by itself', async () => {
    const service = await startServiceProcess(await options());
    await fetch(`${service.url}/crash`).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 300));
    await service.close();
    expect(existsSync(service.logFile)).toBe(true);
  });

  it('fails close() when a secret appears in the output, without printing the secret', async () => {
    const secret = 'rk_live_0123456789abcdefghij';
    const service = await startServiceProcess(
      await options({ SAY: `key is ${secret}` }, { secrets: ['not-in-output'] }),
    );
    service.secrets.add(secret);
    const error: Error = await service.close().then(
      () => expect.fail('closed'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/contains 1 secret\(s\) \(rk_liv\.\.\.\)/);
    expect(error.message).not.toContain(secret);
    expect(existsSync(service.logFile)).toBe(true);
  });

  it('refuses a program that does not exist, saying so', async () => {
    const settings = await options();
    expect(() => createServiceProcess({ ...settings, main: '/nowhere/main.js' })).toThrow(
      /\/nowhere\/main\.js is missing: build it first/,
    );
  });
});

describe('runToExit', () => {
  it('resolves with the exit code and both outputs of a program that refuses to start', async () => {
    const run = await runToExit(PROGRAM, { ...baseEnvironment(), EXIT_AT_START: '78', SAY: 'x' });
    expect(run).toEqual({ code: 78, stdout: 'x\n', stderr: 'refusing to start\n' });
  });

  it('kills and rejects a program still running at the deadline', async () => {
    const port = await findFreePort();
    await expect(
      runToExit(PROGRAM, { ...baseEnvironment(), PORT: String(port) }, 500),
    ).rejects.toThrow(/still running after 500 ms/);
  });
});
