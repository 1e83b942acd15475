/**
 * The demo shop as a child process, started like production (`apps/client-demo/dist/main.js`
 * with its configuration in the environment) through the shared launcher
 * (`service-process.ts`), on a free loopback port, ready once `/healthz` answers 200.
 *
 * A benchmark that composes its own variant of the app (extra middleware or routes, from the
 * app's factory) passes that program as `main`; everything else stays the same.
 *
 * Secrets: the session secret is random per app and, with a `RAMPART_SITE_KEY`, the site key
 * too; `close()` fails if either ever appears in the output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import {
  baseEnvironment,
  compiledEntry,
  createServiceProcess,
  randomToken,
  type ServiceProcess,
} from './service-process.js';

export interface DemoAppOptions {
  /** The program; default the demo's compiled entry point. */
  readonly main?: string;
  /** `DEMO_*` and `RAMPART_*` settings over the defaults (`RAMPART_MODE=off`, SQLite). */
  readonly env?: Readonly<Record<string, string>>;
  /** Kept across apps (a restart); default a fresh directory removed by `close()`. */
  readonly dataDir?: string;
  /** Default a free one. */
  readonly port?: number;
  /** Pin the app to this core (a benchmark giving its load generator the other). */
  readonly cpu?: number;
}

export interface DemoApp
  extends Pick<ServiceProcess, 'url' | 'port' | 'pid' | 'secrets' | 'output' | 'start'> {
  readonly dataDir: string;
  /** Takes the app down (its data stays). */
  stop(): Promise<void>;
  /** Stops the app; fails if its output holds a secret; removes the data it owns. */
  close(): Promise<void>;
}

/** Starts the demo app and resolves once it serves `/healthz`. */
export async function startDemoApp(options: DemoAppOptions = {}): Promise<DemoApp> {
  const main = options.main ?? compiledEntry('@rampart/client-demo');
  const port = options.port ?? (await findFreePort());
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rampart-demo-'));
  // A fleet behind one balancer shares its secret (sessions made by one instance hold on all).
  const sessionSecret = options.env?.DEMO_SESSION_SECRET ?? randomToken();
  const env: Record<string, string> = {
    ...baseEnvironment(),
    DEMO_HOST: '127.0.0.1',
    DEMO_PORT: String(port),
    DEMO_DATA_DIR: dataDir,
    DEMO_SESSION_SECRET: sessionSecret,
    RAMPART_MODE: 'off',
    ...options.env,
  };
  const service = createServiceProcess({
    name: 'demo',
    main,
    env,
    port,
    readyPath: '/healthz',
    secrets: [sessionSecret, env.RAMPART_SITE_KEY ?? ''],
    ...(options.cpu === undefined ? {} : { cpu: options.cpu }),
  });
  const release = () => {
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await service.start();
  } catch (error) {
    await service.close().catch(() => {});
    release();
    throw error;
  }
  return {
    url: service.url,
    port,
    dataDir,
    get pid() {
      return service.pid;
    },
    secrets: service.secrets,
    output: () => service.output(),
    start: () => service.start(),
    stop: async () => {
      await service.stop();
    },
    close: async () => {
      try {
        await service.close();
      } finally {
        release();
      }
    },
  };
}
