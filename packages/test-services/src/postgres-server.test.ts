import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sharedPostgres, startPostgres } from './postgres-server.js';

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

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('startPostgres', () => {
  it('starts a loopback server with the database, and stop frees the port and the directory', async () => {
    const server = await startPostgres({ database: 'first' });
    try {
      expect(server.url).toBe(`postgres://rampart@127.0.0.1:${server.port}/first`);
      expect(server.database).toBe('first');
      const [row] = await query<Record<string, string>>(
        server.url,
        `SELECT current_database() AS db, current_user AS usr, current_setting('fsync') AS fsync,
                current_setting('listen_addresses') AS listen,
                current_setting('server_encoding') AS encoding`,
      );
      expect(row).toEqual({
        db: 'first',
        usr: 'rampart',
        fsync: 'off',
        listen: '127.0.0.1',
        encoding: 'UTF8',
      });
      expect(existsSync(server.socketDir)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await accepts(server.port)).toBe(false);
    expect(existsSync(server.socketDir)).toBe(false);
    await server.stop(); // Idempotent.
  });

  it('runs two servers at once, each with its own databases', async () => {
    const [a, b] = await Promise.all([startPostgres(), startPostgres()]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(a.database).toBe('rampart_test');
      const url = await a.createDatabase('Other db');
      expect(url).toBe(`postgres://rampart@127.0.0.1:${a.port}/Other%20db`);
      await query(url, 'CREATE TABLE t (x int); INSERT INTO t VALUES (42)');
      expect(await query(url, 'SELECT x FROM t')).toEqual([{ x: 42 }]);
      await expect(query(b.url.replace(/[^/]+$/, 'Other%20db'), 'SELECT 1')).rejects.toThrow(
        /does not exist/,
      );
      expect(await query(b.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('fails clearly when the binaries are not there', async () => {
    await expect(startPostgres({ binDir: '/nonexistent' })).rejects.toThrow(
      /no initdb and postgres executables/,
    );
  });
});

describe('sharedPostgres', () => {
  it('starts one server on first use and hands out a fresh database per call', async () => {
    const shared = sharedPostgres('t');
    try {
      const first = await shared.freshDatabase();
      const second = await shared.freshDatabase();
      expect(new URL(first).port).toBe(new URL(second).port);
      expect(first).not.toBe(second);
      await query(first, 'CREATE TABLE only_here (x int)');
      expect(
        await query(
          second,
          "SELECT 1 FROM information_schema.tables WHERE table_name = 'only_here'",
        ),
      ).toEqual([]);
    } finally {
      await shared.stop();
      await shared.stop(); // idempotent
    }
  });
});
