/**
 * `npm run dev`'s provisioning against the real hub, then the demo with the real WAF client
 * syncing from that hub: the whole local loop, with no stand-in anywhere.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '@rampart/test-services/free-port';
import { type Hub, startHub } from '@rampart/test-services/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../test-support/demo-server.js';
import { DEMO_RULES } from '../waf/demo-rules.js';
import { createWaf } from '../waf/waf.js';
import { ProvisionError, provisionDemoSite, provisionWhenReady, waitForHub } from './provision.js';

let hub: Hub;
let dir: string;
const logs: string[] = [];
const log = (line: string) => logs.push(line);

beforeAll(async () => {
  hub = await startHub();
  dir = mkdtempSync(join(tmpdir(), 'rampart-demo-provision-'));
});
afterAll(async () => {
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

const keyFile = () => join(dir, 'site-key');
const provision = () =>
  provisionDemoSite({
    hubUrl: hub.url,
    adminToken: hub.adminToken,
    siteId: 'demo',
    keyFile: keyFile(),
    log,
  });

describe('provisioning the demo site', () => {
  const keys: string[] = [];

  it('creates the site, stores its key privately and adds the demo rules', async () => {
    const result = await provision();
    expect(result).toMatchObject({ site: 'created', rulesAdded: DEMO_RULES.length });
    expect(readFileSync(keyFile(), 'utf8').trim()).toBe(result.key);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    keys.push(result.key);
    hub.secrets.add(result.key);
  });

  it('keeps a stored key the hub accepts and leaves existing rules alone', async () => {
    const result = await provision();
    expect(result).toMatchObject({ site: 'key_kept', rulesAdded: 0, key: keys[0] });
  });

  it('rotates the key when the stored one is refused or missing', async () => {
    writeFileSync(keyFile(), 'rk_not_a_key_of_this_hub\n');
    const refused = await provision();
    expect(refused.site).toBe('key_rotated');
    rmSync(keyFile());
    const missing = await provision();
    expect(missing.site).toBe('key_rotated');
    keys.push(refused.key, missing.key);
    expect(new Set(keys).size).toBe(3);
    // Rotation revoked the earlier keys.
    const first = await fetch(`${hub.url}/v1/snapshot`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${keys[0]}` },
    });
    expect(first.status).toBe(401);
  });

  it('never logs a key or the admin token', () => {
    const text = logs.join('\n');
    for (const secret of [...keys, hub.adminToken]) expect(text).not.toContain(secret);
    expect(text).toContain(keyFile());
  });

  it('gives up on a hub that never answers, saying what to do', async () => {
    const waiting = waitForHub(`http://127.0.0.1:${await findFreePort()}`, 1500, () => {});
    await expect(waiting).rejects.toThrow(ProvisionError);
    await expect(waiting).rejects.toThrow(/not ready after 2 s \(ECONNREFUSED\).*npm run dev/);
  });

  it('starts over when the hub restarts while provisioning, and not on a wrong answer', async () => {
    // In front of the real hub: the first request after the readiness check loses its
    // connection, and for a second every new connection is dropped, as while the hub restarts.
    const proxy = await restartingProxy(hub.url, 2, 1000);
    const lines: string[] = [];
    const options = {
      hubUrl: proxy.url,
      adminToken: hub.adminToken,
      siteId: 'demo',
      keyFile: keyFile(),
      log: (line: string) => lines.push(line),
      timeoutMs: 20_000,
    };
    try {
      const result = await provisionWhenReady(options);
      expect(result.site).toBe('key_kept');
      expect(proxy.broken()).toBeGreaterThanOrEqual(1);
      expect(lines.join('\n')).toMatch(/stopped answering \((ECONNRESET|UND_ERR_SOCKET)\)/);
      const refused = provisionWhenReady({ ...options, adminToken: 'not-the-token' });
      await expect(refused).rejects.toThrow(/reading site demo failed: HTTP 401/);
    } finally {
      await proxy.close();
    }
  });

  it('lets the demo enforce the rules the hub built, with the provisioned key', async () => {
    const { key } = await provision();
    const waf = createWaf({
      mode: 'enforce',
      hubUrl: hub.url,
      siteKey: key,
      dataDir: join(dir, 'waf'),
      syncIntervalMs: 200,
      closeTimeoutMs: 500,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      env: {},
    });
    const server = await startDemo({ waf });
    try {
      const deadline = Date.now() + 30_000; // the hub builds the snapshot a moment after the rules
      while (waf.stats().snapshotVersion === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(waf.stats().snapshotVersion).toBeGreaterThanOrEqual(1);
      const blocked = await fetch(`${server.url}/wp-admin/install.php`);
      expect(blocked.status).toBe(403);
      expect(blocked.headers.get('server-timing')).toMatch(/^waf;dur=[\d.]+;desc="block\/enforce"/);
      const page = await fetch(`${server.url}/products`);
      expect(page.status).toBe(200);
      expect(hub.output()).not.toContain(key);
    } finally {
      await server.stop();
    }
  });
});

/**
 * A TCP proxy to `target` that plays a restart: the connection carrying the `breakAt`-th HTTP
 * request (counted over all connections) is cut, and for `downMs` after that every new
 * connection is closed at once.
 */
async function restartingProxy(target: string, breakAt: number, downMs: number) {
  const { hostname, port } = new URL(target);
  let requests = 0;
  let downUntil = 0;
  let broken = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (Date.now() < downUntil) {
      broken++;
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: hostname, port: Number(port) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('data', (chunk: Buffer) => {
      requests += chunk.toString('latin1').split(' HTTP/1.1\r\n').length - 1;
      if (requests >= breakAt && downUntil === 0) {
        downUntil = Date.now() + downMs;
        broken++;
        cut();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    broken: () => broken,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
