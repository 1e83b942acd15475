import { startRedisServer } from '@rampart/test-services/redis-server';
import { it, expect } from 'vitest';
import { startHub } from '../test-support/hub-process.js';
import { HubClient } from '../test-support/hub-client.js';

it('smoke', async () => {
  const redis = await startRedisServer();
  const t0 = Date.now();
  const hub = await startHub({ redisUrl: redis.url, env: { HUB_LOG_LEVEL: 'debug' } });
  console.log('start ms', Date.now() - t0);
  try {
    const c = new HubClient(hub.url, hub.adminToken);
    const { site, key } = await c.createSite('shop');
    console.log(site);
    const r = await c.admin('POST', `/v1/sites/${site.id}/rules`, { id: 'wp', type: 'pattern', action: 'block', when: [{ field: 'path', match: 'prefix', value: '/wp-admin' }] });
    console.log(r.status, r.text);
    await c.waitForVersion(site.id, 1);
    const s = await c.site(key);
    console.log(s.status, [...s.headers.entries()], s.bytes.length);
    console.log((await c.admin('GET', '/v1/metrics')).text);
    console.log((await c.admin('POST', '/v1/sites', undefined, {raw: '{"name": '})).text);
    console.log((await c.admin('GET', '/health/ready')).text);
  } finally {
    console.log('exit', await hub.stop());
    console.log(hub.output());
    await redis.stop();
  }
});
