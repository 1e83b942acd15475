/**
 * The site's stored prexy configuration, read by the API and by snapshot builds alike (one
 * reading of the table). Stored as `parseProxyConfig` normalised it; parsed again on the way out,
 * which fills in fields added since it was written.
 */
import {
  describeProxyConfigIssues,
  type ProxyConfig,
  parseProxyConfig,
} from '@rampart/rules-core/proxy-config/proxy-config';
import type { Kysely } from 'kysely';
import type { HubSchema } from '../database/schema.js';

/**
 * The configuration, or null when the site has none. Throws when the stored document no
 * longer validates (an engine that became stricter): a build then fails with the reason rather
 * than ship a configuration no proxy could load.
 */
export async function storedProxyConfig(
  db: Kysely<HubSchema>,
  siteId: string,
): Promise<ProxyConfig | null> {
  const row = await db
    .selectFrom('proxy_configs')
    .select('body')
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  if (!row) return null;
  const parsed = parseProxyConfig(JSON.parse(row.body));
  if (parsed.ok) return parsed.config;
  throw new Error(
    `the stored proxy configuration of site ${siteId} no longer validates: ${describeProxyConfigIssues(parsed.issues)}`,
  );
}
