import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from './redis-server.js';

describe('startRedisServer', () => {
  it('starts a loopback server that answers, and stops it', async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
    } finally {
      client.disconnect();
      await server.stop();
    }
    await expect(startRedisServer({ binary: '/nonexistent/redis-server' })).rejects.toThrow(
      /redis-server not found/,
    );
  });
});
