/**
 * A demo site on a test hub, as `npm run dev` provisions it (`dev/provision.ts`: the site, its
 * key, the demo's rules), quietly; the key is added to the hub's secrets, so the test fails if
 * the hub ever writes it out. Resolves with the site key.
 */
import { join } from 'node:path';
import type { Hub } from '@rampart/test-services/hub';
import { provisionDemoSite } from '../dev/provision.js';

export async function provisionedSite(hub: Hub, siteId: string, dir: string): Promise<string> {
  const { key } = await provisionDemoSite({
    hubUrl: hub.url,
    adminToken: hub.adminToken,
    siteId,
    keyFile: join(dir, 'site-key'),
    log: () => {},
  });
  hub.secrets.add(key);
  return key;
}
