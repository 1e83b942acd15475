/**
 * Each site's prexy configuration: routes (incoming host -> upstream origin, with their body
 * options) and substitution rule sets per path prefix. A write is validated whole by
 * rules-core's `parseProxyConfig`, which compiles every rule with the substitution engine, so a
 * rule the engine cannot run is refused here (422 naming `ruleSets[i].rules[j]`, the position
 * and the construct) and never reaches a proxy. Stored in one statement with a revision bump,
 * then a build is requested: the configuration travels in the site's next snapshot.
 */
import { Injectable } from '@nestjs/common';
import {
  emptyProxyConfig,
  type ProxyConfig,
  parseProxyConfig,
} from '@rampart/rules-core/proxy-config/proxy-config';
import { BuildQueueService } from '../builds/build-queue.service.js';
import { DatabaseService } from '../database/database.service.js';
import { invalidFields } from '../http/problem-details.js';
import { bumpRulesRevision, SitesService } from '../sites/sites.service.js';
import { storedProxyConfig } from './stored-proxy-config.js';

@Injectable()
export class ProxyConfigService {
  constructor(
    private readonly database: DatabaseService,
    private readonly sites: SitesService,
    private readonly queue: BuildQueueService,
  ) {}

  /** The site's configuration; the empty one (no routes, no rules) until one is set. 404 for an unknown site. */
  async get(siteId: string): Promise<ProxyConfig> {
    await this.sites.get(siteId);
    return (await storedProxyConfig(this.database.db, siteId)) ?? emptyProxyConfig();
  }

  /** Replaces the configuration whole: 422 naming every bad field, and nothing changed, when one is wrong. */
  async replace(siteId: string, raw: unknown): Promise<ProxyConfig> {
    await this.sites.get(siteId);
    const parsed = parseProxyConfig(raw);
    if (!parsed.ok) throw invalidFields(parsed.issues);
    const row = {
      site_id: siteId,
      body: JSON.stringify(parsed.config),
      updated_at: new Date().toISOString(),
    };
    await this.database.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('proxy_configs')
        .values(row)
        .onConflict((oc) =>
          oc.column('site_id').doUpdateSet({ body: row.body, updated_at: row.updated_at }),
        )
        .execute();
      await bumpRulesRevision(tx, siteId);
    });
    await this.queue.requestBuild(siteId);
    return parsed.config;
  }

  /** Removes the configuration: the next snapshot carries none. */
  async remove(siteId: string): Promise<void> {
    await this.sites.get(siteId);
    await this.database.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('proxy_configs').where('site_id', '=', siteId).execute();
      await bumpRulesRevision(tx, siteId);
    });
    await this.queue.requestBuild(siteId);
  }
}
