/**
 * The real hub refuses to start on a bad configuration, with one clear line naming every bad
 * variable, and never echoes a secret (the admin token, credentials in DATABASE_URL/REDIS_URL).
 */
import { findFreePort } from '@rampart/test-services/free-port';
import { runHubExpectingFailure } from '@rampart/test-services/hub';
import type { FinishedRun } from '@rampart/test-services/service-process';
import { beforeAll, describe, expect, it } from 'vitest';

describe('hub start-up configuration', () => {
  // The failing starts run side by side (each is a Node process loading the hub).
  let badValues: FinishedRun;
  let malformedSecrets: FinishedRun;
  let missingSecrets: FinishedRun;
  let unreachableDatabase: FinishedRun;

  beforeAll(async () => {
    const port = await findFreePort();
    [badValues, malformedSecrets, missingSecrets, unreachableDatabase] = await Promise.all([
      runHubExpectingFailure({
        HUB_PORT: '70000',
        HUB_SNAPSHOT_RETENTION: '0',
        HUB_LOG_LEVEL: 'loud',
        HUB_MAX_UPLOAD_BYTES: 'lots',
        HUB_TRUST_PROXY: 'yes',
      }),
      runHubExpectingFailure({
        HUB_ADMIN_TOKEN: 'short-secret-token',
        DATABASE_URL: 'mysql://admin:hunter2@db.example/rampart',
        REDIS_URL: 'http://user:redis-pass@cache.example',
      }),
      runHubExpectingFailure({ HUB_ADMIN_TOKEN: undefined, REDIS_URL: undefined }),
      runHubExpectingFailure({
        DATABASE_URL: `postgres://rampart:db-password-1@127.0.0.1:${port}/rampart`,
      }),
    ]);
  });

  it('refuses bad values with one line naming each variable', () => {
    const { code, stdout, stderr } = badValues;
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^hub: invalid hub configuration: /),
    ]);
    for (const variable of [
      'HUB_PORT',
      'HUB_SNAPSHOT_RETENTION',
      'HUB_LOG_LEVEL',
      'HUB_MAX_UPLOAD_BYTES',
      'HUB_TRUST_PROXY',
    ]) {
      expect(stderr).toContain(variable);
    }
    expect(stderr).toContain('HUB_PORT must not be greater than 65535');
  });

  it('names malformed and missing secrets without echoing them', () => {
    const { code, stdout, stderr } = malformedSecrets;
    expect(code).toBe(1);
    expect(stderr).toMatch(/^hub: invalid hub configuration: /);
    expect(stderr).toContain('HUB_ADMIN_TOKEN must be at least 32 characters');
    expect(stderr).toContain('DATABASE_URL must be a postgres:// URL');
    expect(stderr).toContain('REDIS_URL must be a redis:// or rediss:// URL');
    for (const secret of ['short-secret-token', 'hunter2', 'redis-pass']) {
      expect(stdout + stderr).not.toContain(secret);
    }
    expect(missingSecrets.code).toBe(1);
    expect(missingSecrets.stderr).toMatch(/^hub: invalid hub configuration: .*HUB_ADMIN_TOKEN/);
    expect(missingSecrets.stderr).toContain('REDIS_URL');
  });

  it('exits with the reason when the database cannot be reached, without the password', () => {
    const { code, stdout, stderr } = unreachableDatabase;
    expect(code).toBe(1);
    expect(stderr).toContain('ECONNREFUSED');
    expect(stdout + stderr).not.toContain('db-password-1');
  });
});
