/**
 * The real hub (`apps/hub/dist/main.js`, built by turbo before these tests: `@rampart/hub` is a
 * devDependency) as a child process with its own redis-server and data directory, on a free
 * loopback port, through the shared launcher of `@rampart/test-services`; `stop()` ends both.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startHub } from '@rampart/test-services/hub-process';
import { startRedisServer } from '@rampart/test-services/redis-server';

const HUB_MAIN = join(
  dirname(createRequire(import.meta.url).resolve('@rampart/hub/package.json')),
  'dist',
  'main.js',
);

export interface TestHub {
  readonly url: string;
  readonly adminToken: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startTestHub(): Promise<TestHub> {
  const redis = await startRedisServer();
  try {
    const hub = await startHub({
      main: HUB_MAIN,
      redisUrl: redis.url,
      env: { HUB_BUILD_DEBOUNCE_MS: '100' },
    });
    return {
      url: hub.url,
      adminToken: hub.adminToken,
      output: () => hub.output(),
      stop: async () => {
        await hub.stop();
        await redis.stop();
      },
    };
  } catch (error) {
    await redis.stop();
    throw error;
  }
}
