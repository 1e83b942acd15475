/**
 * Each site's detector settings, stored whole (every detector) as JSON; a site without a row
 * runs the defaults. Read on every ingested batch, so kept for {@link CACHE_MS} per hub instance:
 * a change made through another instance applies within that.
 */
import { Injectable } from '@nestjs/common';
import { DatabaseService } from '../database/database.service.js';
import { invalidFields } from '../http/problem-details.js';
import { SitesService } from '../sites/sites.service.js';
import {
  DEFAULT_DETECTION_SETTINGS,
  type DetectionSettings,
  parseDetectionSettings,
} from './detection-settings.js';

const CACHE_MS = 5000;
const MAX_CACHED = 10_000;

@Injectable()
export class DetectionSettingsService {
  private readonly cache = new Map<string, { at: number; settings: Promise<DetectionSettings> }>();

  constructor(
    private readonly database: DatabaseService,
    private readonly sites: SitesService,
  ) {}

  /** The site's settings (404 for an unknown site). */
  async get(siteId: string): Promise<DetectionSettings> {
    await this.sites.get(siteId);
    return this.load(siteId);
  }

  /** The settings detection runs with: cached, the defaults for a site without any. */
  forDetection(siteId: string, now = Date.now()): Promise<DetectionSettings> {
    const hit = this.cache.get(siteId);
    if (hit && now - hit.at < CACHE_MS) return hit.settings;
    const settings = this.load(siteId);
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(siteId, { at: now, settings });
    settings.catch(() => this.cache.delete(siteId));
    return settings;
  }

  /**
   * Applies a (partial) settings document over the current settings: 422 naming every bad field,
   * and nothing changed, when one is wrong.
   */
  async update(siteId: string, raw: unknown): Promise<DetectionSettings> {
    await this.sites.get(siteId);
    const parsed = parseDetectionSettings(raw, await this.load(siteId));
    if (!parsed.ok) throw invalidFields(parsed.issues);
    const row = {
      site_id: siteId,
      body: JSON.stringify(parsed.settings),
      updated_at: new Date().toISOString(),
    };
    await this.database.db
      .insertInto('detection_settings')
      .values(row)
      .onConflict((oc) =>
        oc.column('site_id').doUpdateSet({ body: row.body, updated_at: row.updated_at }),
      )
      .execute();
    this.cache.delete(siteId);
    return parsed.settings;
  }

  private async load(siteId: string): Promise<DetectionSettings> {
    const row = await this.database.db
      .selectFrom('detection_settings')
      .select('body')
      .where('site_id', '=', siteId)
      .executeTakeFirst();
    if (!row) return DEFAULT_DETECTION_SETTINGS;
    // Stored whole; parsing over the defaults also fills detectors added since it was written.
    const parsed = parseDetectionSettings(JSON.parse(row.body));
    return parsed.ok ? parsed.settings : DEFAULT_DETECTION_SETTINGS;
  }
}
