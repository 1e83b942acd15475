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
 * longer validates (an engine that became stricter); builds check the same in their worker.
 */
export async function storedProxyConfig(
  db: Kysely<HubSchema>,
  siteId: string,
): Promise<ProxyConfig | null> {
  const document = await storedProxyConfigDocument(db, siteId);
  if (document === null) return null;
  const parsed = parseProxyConfig(document);
  if (parsed.ok) return parsed.config;
  throw new Error(
    `the stored proxy configuration of site ${siteId} no longer validates: ${describeProxyConfigIssues(parsed.issues)}`,
  );
}

/**
 * The stored document as JSON, unparsed: what a snapshot build hands its worker thread, which
 * validates it (compiling every rule) off the hub's event loop, once.
 */
export async function storedProxyConfigDocument(
  db: Kysely<HubSchema>,
  siteId: string,
): Promise<unknown> {
  const row = await db
    .selectFrom('proxy_configs')
    .select('body')
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  return row ? (JSON.parse(row.body) as unknown) : null;
}
