/**
 * The production entry point (`node dist/main.js`, built by turbo before the tests) as a child
 * process: configuration from the environment, start-up, and a clean SIGTERM.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MAIN, startAppProcess } from './bench/app-process.js';

let dataDir: string;
beforeAll(() => {
  if (!existsSync(DEMO_MAIN)) throw new Error(`${DEMO_MAIN} is missing: run npm run build first`);
  dataDir = mkdtempSync(join(tmpdir(), 'rampart-demo-main-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function run(env: Record<string, string>) {
  return spawnSync(process.execPath, [DEMO_MAIN], {
    env: { PATH: process.env.PATH ?? '', DEMO_DATA_DIR: dataDir, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('node dist/main.js', () => {
  it('starts from the environment, generates a private session secret and stops on SIGTERM', async () => {
    const app = await startAppProcess({
      DEMO_DATA_DIR: dataDir,
      DEMO_PORT: '0',
      RAMPART_MODE: 'off',
    });
    try {
      expect(app.output()).toMatch(
        /listening on http:\/\/127\.0\.0\.1:\d+ \(database: sqlite, WAF mode: off/,
      );
      const health = await fetch(`${app.url}/healthz`);
      expect(await health.json()).toEqual({ status: 'ok', database: 'sqlite' });
      expect(statSync(join(dataDir, 'session-secret')).mode & 0o777).toBe(0o600);
    } finally {
      await app.stop();
    }
    expect(app.output()).toContain('SIGTERM: shutting down');
  });

  it('refuses a bad DEMO_* variable with one message naming it', () => {
    const result = run({ DEMO_PORT: '70000' });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('DEMO_PORT must be an integer from 0 to 65535');
  });

  it('refuses a bad RAMPART_* variable, and a missing site key, without printing secrets', () => {
    const result = run({
      DEMO_PORT: '0',
      RAMPART_MODE: 'enforce',
      RAMPART_HUB_URL: 'ftp://hub',
    });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('RAMPART_HUB_URL');
    expect(result.stderr).toContain('RAMPART_SITE_KEY');
    const secret = run({
      DEMO_PORT: '0',
      RAMPART_MODE: 'loud',
      RAMPART_SITE_KEY: 'rk_secret value',
    });
    expect(secret.status).toBe(78);
    expect(secret.stderr).toContain('RAMPART_MODE');
    expect(secret.stderr).not.toContain('rk_secret');
  });
});
