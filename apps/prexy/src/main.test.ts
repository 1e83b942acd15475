/**
 * The `prexy` command as a user runs it: the compiled entry point in a process of its own, with
 * a configuration file in front of a real origin on loopback. Its exit codes, its signals and
 * the heap flags it serves with (see `server/streaming-heap.ts`).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '@rampart/test-services/free-port';
import { getText } from '@rampart/test-services/http-get';
import {
  baseEnvironment,
  compiledEntry,
  runToExit,
  type ServiceProcess,
  startServiceProcess,
} from '@rampart/test-services/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMING_HEAP_FLAGS } from './server/streaming-heap.js';
import { eventually, type Origin, startOrigin } from './test-support/loopback.js';

const MAIN = compiledEntry('@rampart/prexy');

let dir: string;
let origin: Origin;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prexy-main-'));
  origin = await startOrigin((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>old.example</p>');
  });
});

afterAll(async () => {
  await origin.close();
  await rm(dir, { recursive: true, force: true });
});

/** A configuration file serving `127.0.0.1:<port>` from the origin with one rewrite. */
async function configFile(name: string, port: number, replacement: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    JSON.stringify({
      listen: { host: '127.0.0.1', port },
      workers: 1,
      accessLog: false,
      sites: [
        {
          name: 'shop',
          proxy: {
            routes: [{ host: `127.0.0.1:${port}`, upstream: origin.url }],
            ruleSets: [
              {
                pathPrefix: '/',
                rules: [{ pattern: 'old\\.example', replacement, flags: 'g' }],
              },
            ],
          },
        },
      ],
    }),
  );
  return file;
}

/** The body of `/` once it equals `expected`, or the last one seen after 10 s. */
async function bodyOnceItIs(port: number, expected: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  let body = '';
  while (Date.now() < deadline) {
    body = (await getText(port, '/', { host: `127.0.0.1:${port}` })).body;
    if (body === expected) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return body;
}

const environment = (config: string) => ({ ...baseEnvironment(), PREXY_CONFIG: config });

describe('prexy [--config FILE]', () => {
  let port: number;
  let config: string;
  let prexy: ServiceProcess;

  beforeAll(async () => {
    port = await findFreePort();
    config = await configFile('prexy.json', port, 'new.example');
    prexy = await startServiceProcess({
      name: 'prexy',
      main: MAIN,
      env: environment(config),
      port,
      readyPath: '/',
    });
  });

  afterAll(async () => {
    await prexy.close();
  });

  it('serves the file it was given, substituting', async () => {
    expect(await getText(port, '/', { host: `127.0.0.1:${port}` })).toEqual({
      status: 200,
      body: '<p>new.example</p>',
    });
  });

  it('runs, under the same process id, with its heap flags', () => {
    const argv = readFileSync(`/proc/${prexy.pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toEqual(expect.arrayContaining([...STREAMING_HEAP_FLAGS]));
  });

  it('reloads the file on SIGHUP, and keeps what is in force when the new file is invalid', async () => {
    await configFile('prexy.json', port, 'newer.example');
    process.kill(prexy.pid as number, 'SIGHUP');
    const body = await bodyOnceItIs(port, '<p>newer.example</p>');
    expect(body).toBe('<p>newer.example</p>');

    await writeFile(config, '{"sites": [{"name": "shop", "proxy": {"routes": "nope"}}]}');
    process.kill(prexy.pid as number, 'SIGHUP');
    await eventually('the refusal in the log', () => prexy.output().includes('reload refused'));
    expect(prexy.output()).toMatch(/reload refused.*routes/);
    expect((await getText(port, '/', { host: `127.0.0.1:${port}` })).body).toBe(
      '<p>newer.example</p>',
    );
  });

  it('exits 0 on SIGTERM', async () => {
    expect(await prexy.stop()).toBe(0);
  });
});

describe('exit codes', () => {
  it('2 for an invalid file, naming every problem with its field', async () => {
    const file = join(dir, 'invalid.json');
    await writeFile(
      file,
      JSON.stringify({
        listen: { port: 'eighty' },
        sites: [
          {
            name: 'shop',
            proxy: {
              routes: [],
              ruleSets: [
                { pathPrefix: '/', rules: [{ pattern: 'a(?=b)', replacement: '', flags: 'g' }] },
              ],
            },
          },
        ],
      }),
    );
    const run = await runToExit(MAIN, environment(file));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('listen.port');
    expect(run.stderr).toMatch(/ruleSets\[0\]\.rules\[0\].*lookahead/);
  });

  it('2 for a file that does not exist', async () => {
    const run = await runToExit(MAIN, environment(join(dir, 'missing.json')));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('missing.json');
  });

  it('1 when the port is taken', async () => {
    const taken: Server = createServer();
    const port = await findFreePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const run = await runToExit(MAIN, environment(await configFile('taken.json', port, 'x')));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
