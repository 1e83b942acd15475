import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from './redis-server.js';

/** Resolves true when something accepts a TCP connection on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function client(url: string): Redis {
  return new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
}

describe('startRedisServer', () => {
  it('starts a loopback server without persistence, and stop frees the port and the directory', async () => {
    const server = await startRedisServer();
    const redis = client(server.url);
    let dir = '';
    try {
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      expect(await redis.config('GET', 'save')).toEqual(['save', '']);
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      expect(await redis.config('GET', 'bind')).toEqual(['bind', '127.0.0.1']);
      dir = String((await redis.config('GET', 'dir'))[1]);
      expect(existsSync(dir)).toBe(true);
    } finally {
      redis.disconnect();
      await server.stop();
    }
    expect(await accepts(server.port)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    await server.stop(); // Idempotent.
    await expect(server.resume()).rejects.toThrow(/was stopped/);
  });

  it('pause() is a real outage and resume() brings an empty server back on the same port', async () => {
    const server = await startRedisServer();
    const redis = client(server.url);
    try {
      await redis.connect();
      await redis.set('k', 'v');
      await server.pause();
      expect(await accepts(server.port)).toBe(false);
      await expect(redis.get('k')).rejects.toThrow();
      await server.pause(); // No-op.

      await server.resume();
      await server.resume(); // No-op.
      const again = client(server.url);
      try {
        await again.connect();
        expect(await again.ping()).toBe('PONG');
        expect(await again.get('k')).toBeNull(); // Nothing persisted.
      } finally {
        again.disconnect();
      }
    } finally {
      redis.disconnect();
      await server.stop();
    }
    expect(await accepts(server.port)).toBe(false);
  });

  it('stop() after pause() still cleans up', async () => {
    const server = await startRedisServer();
    await server.pause();
    await server.stop();
    expect(await accepts(server.port)).toBe(false);
  });

  it('fails clearly when redis-server is missing or does not start', async () => {
    await expect(startRedisServer({ binary: '/nonexistent/redis-server' })).rejects.toThrow(
      /redis-server not found/,
    );
    await expect(startRedisServer({ extraArgs: ['--no-such-option', 'x'] })).rejects.toThrow(
      /exited early/,
    );
  });
});
