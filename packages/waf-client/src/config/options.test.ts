import { describe, expect, it } from 'vitest';
import { RampartConfigError, resolveConfig } from './options.js';

const KEY = 'rk_test_secret_key_1234567890';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RampartConfigError);
    expect((error as Error).message).not.toContain(KEY);
    return [...(error as RampartConfigError).problems];
  }
  throw new Error('expected a RampartConfigError');
}

describe('resolveConfig', () => {
  it('applies the documented defaults', () => {
    const config = resolveConfig({
      env: { RAMPART_HUB_URL: 'http://hub:4000/', RAMPART_SITE_KEY: KEY },
    });
    expect(config).toMatchObject({
      hubUrl: 'http://hub:4000',
      reportUrl: 'http://hub:4000/v1/reports',
      dataDir: './.rampart',
      syncIntervalMs: 30_000,
      syncEveryRequests: 10_000,
      syncWaitMs: 30_000,
      syncDeltas: true,
      failMode: 'open',
      trustedProxies: [],
      blockResponse: { status: 403 },
      reportBatchSize: 250,
      reportIntervalMs: 5000,
      reportQueueSize: 10_000,
      passSampleRate: 0.01,
      mode: 'enforce',
      rateLimitHeaders: 'refusals',
      addressMemo: 16_384,
      fieldMemo: 1024,
      evaluation: 'batched',
    });
    expect(config.instanceId).toMatch(new RegExp(`:${process.pid}$`));
  });

  it('reads every RAMPART_* variable, and options win over them', () => {
    const env = {
      RAMPART_HUB_URL: 'https://hub.example',
      RAMPART_SITE_KEY: KEY,
      RAMPART_DATA_DIR: '/var/lib/rampart',
      RAMPART_SYNC_INTERVAL_MS: '60000',
      RAMPART_SYNC_EVERY_REQUESTS: '0',
      RAMPART_SYNC_WAIT_MS: '0',
      RAMPART_SYNC_DELTAS: 'false',
      RAMPART_FAIL_MODE: 'closed',
      RAMPART_TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8::/32',
      RAMPART_BLOCK_STATUS: '451',
      RAMPART_BLOCK_BODY: 'nope {requestId}',
      RAMPART_REPORT_BATCH_SIZE: '100',
      RAMPART_REPORT_INTERVAL_MS: '1000',
      RAMPART_REPORT_QUEUE_SIZE: '50',
      RAMPART_PASS_SAMPLE_RATE: '0.5',
      RAMPART_MODE: 'monitor',
      RAMPART_REPORT_URL: 'https://reports.example/in',
      RAMPART_INSTANCE_ID: 'web-1',
      RAMPART_ADDRESS_MEMO: '0',
      RAMPART_FIELD_MEMO: '0',
      RAMPART_RATE_LIMIT_HEADERS: 'all',
      RAMPART_EVALUATION: 'inline',
    };
    expect(resolveConfig({ env })).toMatchObject({
      hubUrl: 'https://hub.example',
      dataDir: '/var/lib/rampart',
      syncIntervalMs: 60_000,
      syncEveryRequests: 0,
      syncWaitMs: 0,
      syncDeltas: false,
      failMode: 'closed',
      trustedProxies: ['10.0.0.0/8', '2001:db8::/32'],
      blockResponse: { status: 451, body: 'nope {requestId}', headers: {} },
      reportBatchSize: 100,
      reportIntervalMs: 1000,
      reportQueueSize: 50,
      passSampleRate: 0.5,
      mode: 'monitor',
      reportUrl: 'https://reports.example/in',
      instanceId: 'web-1',
      addressMemo: 0,
      fieldMemo: 0,
      rateLimitHeaders: 'all',
      evaluation: 'inline',
    });
    expect(resolveConfig({ env, mode: 'enforce', syncIntervalMs: 5000 })).toMatchObject({
      mode: 'enforce',
      syncIntervalMs: 5000,
    });
  });

  it('lists every problem at once, naming the option and its variable, never the key', () => {
    const found = problems(() =>
      resolveConfig({
        env: {
          RAMPART_SITE_KEY: `${KEY} with spaces`,
          RAMPART_SYNC_INTERVAL_MS: 'soon',
          RAMPART_FAIL_MODE: 'maybe',
          RAMPART_TRUSTED_PROXIES: '10.0.0.1/8,not-an-ip',
          RAMPART_PASS_SAMPLE_RATE: '2',
          RAMPART_BLOCK_STATUS: '200',
          RAMPART_RATE_LIMIT_HEADERS: 'always',
          RAMPART_EVALUATION: 'later',
          RAMPART_SYNC_WAIT_MS: '700000',
          RAMPART_SYNC_DELTAS: 'sometimes',
        },
      }),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'hubUrl (RAMPART_HUB_URL): is required',
        expect.stringMatching(/^siteKey \(RAMPART_SITE_KEY\): .*value not shown/),
        'syncIntervalMs (RAMPART_SYNC_INTERVAL_MS): must be an integer from 100 to 86400000, got "soon"',
        'failMode (RAMPART_FAIL_MODE): must be one of "open", "closed", got "maybe"',
        expect.stringMatching(/^trustedProxies\[0\] \(RAMPART_TRUSTED_PROXIES\): .*host bits/),
        expect.stringMatching(/^trustedProxies\[1\] \(RAMPART_TRUSTED_PROXIES\): /),
        'passSampleRate (RAMPART_PASS_SAMPLE_RATE): must be a number from 0 to 1, got "2"',
        'blockResponse.status (RAMPART_BLOCK_STATUS): must be an integer from 400 to 599, got "200"',
        'rateLimitHeaders (RAMPART_RATE_LIMIT_HEADERS): must be one of "refusals", "all", got "always"',
        'evaluation (RAMPART_EVALUATION): must be one of "batched", "inline", got "later"',
        'syncWaitMs (RAMPART_SYNC_WAIT_MS): must be an integer from 0 to 600000, got "700000"',
        'syncDeltas (RAMPART_SYNC_DELTAS): must be true or false, got "sometimes"',
      ]),
    );
    expect(found).toHaveLength(12);
  });

  it('refuses credentials in the hub URL (the key belongs in RAMPART_SITE_KEY)', () => {
    const found = problems(() =>
      resolveConfig({ hubUrl: `https://user:${KEY}@hub.example`, siteKey: KEY, env: {} }),
    );
    expect(found).toEqual([
      expect.stringMatching(/^hubUrl \(RAMPART_HUB_URL\): must not contain credentials/),
    ]);
  });

  it('needs neither hub nor key in mode off', () => {
    expect(resolveConfig({ env: { RAMPART_MODE: 'off' } }).mode).toBe('off');
  });
});
