/**
 * The production entry point (`node dist/main.js`, built by turbo before the tests) as a child
 * process: configuration from the environment, start-up, and a clean SIGTERM.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoApp } from '@rampart/test-services/demo-app';
import { baseEnvironment, compiledEntry, runToExit } from '@rampart/test-services/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dataDir: string;
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'rampart-demo-main-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const run = (env: Record<string, string>) =>
  runToExit(compiledEntry('@rampart/client-demo'), {
    ...baseEnvironment(),
    DEMO_DATA_DIR: dataDir,
    ...env,
  });

describe('node dist/main.js', () => {
  it('starts from the environment, generates a private session secret and stops on SIGTERM', async () => {
    // No DEMO_SESSION_SECRET: the app generates one into its data directory.
    const app = await startDemoApp({ dataDir, env: { DEMO_SESSION_SECRET: '' } });
    try {
      expect(app.output()).toMatch(
        /listening on http:\/\/127\.0\.0\.1:\d+ \(database: sqlite, WAF mode: off/,
      );
      const health = await fetch(`${app.url}/healthz`);
      expect(await health.json()).toEqual({ status: 'ok', database: 'sqlite' });
      expect(statSync(join(dataDir, 'session-secret')).mode & 0o777).toBe(0o600);
    } finally {
      await app.close();
    }
    expect(app.output()).toContain('SIGTERM: shutting down');
  });

  it('refuses a bad DEMO_* variable with one message naming it', async () => {
    const result = await run({ DEMO_PORT: '70000' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('DEMO_PORT must be an integer from 0 to 65535');
  });

  it('refuses a bad RAMPART_* variable, and a missing site key, without printing secrets', async () => {
    const result = await run({
      DEMO_PORT: '0',
      RAMPART_MODE: 'enforce',
      RAMPART_HUB_URL: 'ftp://hub',
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('RAMPART_HUB_URL');
    expect(result.stderr).toContain('RAMPART_SITE_KEY');
    const secret = await run({
      DEMO_PORT: '0',
      RAMPART_MODE: 'loud',
      RAMPART_SITE_KEY: 'rk_secret value',
    });
    expect(secret.code).toBe(78);
    expect(secret.stderr).toContain('RAMPART_MODE');
    expect(secret.stderr).not.toContain('rk_secret');
  });
});
