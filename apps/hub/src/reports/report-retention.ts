/**
 * Keeps the report tables bounded: raw events by age (`HUB_EVENT_RETENTION_HOURS`) and by count
 * per site (the newest `HUB_EVENT_RETENTION_COUNT`), per-minute counters by age
 * (`HUB_TRAFFIC_RETENTION_DAYS`), and the batch ids kept for idempotency for two days (a client
 * retries a batch within minutes). Run every minute by a BullMQ job scheduler, once across all
 * hub instances.
 */
import { Inject, Injectable } from '@nestjs/common';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatabaseService } from '../database/database.service.js';
import { minuteOf } from './report-group.js';

const BATCH_IDS_KEPT_MS = 2 * 86_400_000;

@Injectable()
export class ReportRetention {
  constructor(
    private readonly database: DatabaseService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  /** Deletes what is past retention; resolves with the number of raw events deleted. */
  async trim(now = Date.now()): Promise<number> {
    const db = this.database.db;
    const eventsBefore = new Date(now - this.config.eventRetentionHours * 3_600_000).toISOString();
    let deleted = Number(
      (await db.deleteFrom('report_events').where('time', '<', eventsBefore).executeTakeFirst())
        .numDeletedRows,
    );
    const sites = await db.selectFrom('sites').select('id').execute();
    for (const { id } of sites) {
      const oldestKept = await db
        .selectFrom('report_events')
        .select('time')
        .where('site_id', '=', id)
        .orderBy('time', 'desc')
        .offset(this.config.eventRetentionCount)
        .limit(1)
        .executeTakeFirst();
      if (!oldestKept) continue;
      deleted += Number(
        (
          await db
            .deleteFrom('report_events')
            .where('site_id', '=', id)
            .where('time', '<=', oldestKept.time)
            .executeTakeFirst()
        ).numDeletedRows,
      );
    }
    const minute = minuteOf(
      new Date(now - this.config.trafficRetentionDays * 86_400_000).toISOString(),
    );
    await db.deleteFrom('traffic_minutes').where('minute', '<', minute).execute();
    await db.deleteFrom('traffic_top').where('minute', '<', minute).execute();
    await db.deleteFrom('signal_minutes').where('minute', '<', minute).execute();
    await db
      .deleteFrom('report_batches')
      .where('received_at', '<', new Date(now - BATCH_IDS_KEPT_MS).toISOString())
      .execute();
    return deleted;
  }
}
