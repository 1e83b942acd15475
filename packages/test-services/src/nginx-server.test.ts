import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort } from './free-port.js';
import { getText as get } from './http-get.js';
import { SUBS_FILTER_MODULE, startNginx } from './nginx-server.js';

describe('startNginx', () => {
  it('serves the configuration it is given, with the subs_filter module, and stop removes everything', async () => {
    const port = await findFreePort();
    const nginx = await startNginx({
      ports: [port],
      modules: [SUBS_FILTER_MODULE],
      main: 'pcre_jit on;',
      http: `server {
        listen 127.0.0.1:${port};
        location / { root html; subs_filter_types text/html; subs_filter "Sh(o)p" "St$1re" gr; }
      }`,
    });
    try {
      await writeFile(join(nginx.prefix, 'html', 'index.html'), '<p>Shop and Shop</p>');
      const answer = await get(port, '/index.html');
      expect(answer).toEqual({ status: 200, body: '<p>Store and Store</p>' });
      expect(await nginx.workerPids()).toHaveLength(1);
    } finally {
      await nginx.stop();
    }
    expect(existsSync(nginx.prefix)).toBe(false);
    await expect(get(port, '/')).rejects.toThrow(/ECONNREFUSED/);
    await nginx.stop(); // idempotent
  });

  it('fails the start with the error log when the configuration is wrong', async () => {
    const port = await findFreePort();
    await expect(
      startNginx({
        ports: [port],
        http: `server { listen 127.0.0.1:${port}; no_such_directive; }`,
      }),
    ).rejects.toThrow(/no_such_directive/);
  });
});
