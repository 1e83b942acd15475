import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Report ingestion: the batches seen (idempotency), exact per-minute counters, per-minute top
 * lists, a bounded sample of raw events, and signals per minute.
 */
export const reports: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('report_batches')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('instance', 'text', (c) => c.notNull())
      .addColumn('events', 'integer', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('report_batches_pk', ['site_id', 'batch_id'])
      .execute();
    await db.schema
      .createIndex('report_batches_received')
      .on('report_batches')
      .column('received_at')
      .execute();
    await db.schema
      .createTable('traffic_minutes')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('minute', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('traffic_minutes_pk', [
        'site_id',
        'minute',
        'action',
        'mode',
        'rule_id',
        'outcome',
      ])
      .execute();
    await db.schema
      .createTable('traffic_top')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('minute', 'text', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('traffic_top_pk', [
        'site_id',
        'minute',
        'dimension',
        'value',
        'outcome',
      ])
      .execute();
    await db.schema
      .createTable('report_events')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('time', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('instance', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('country', 'text')
      .addColumn('asn', 'integer')
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'text')
      .addColumn('category', 'text')
      .addColumn('monitored_rule_id', 'text')
      .addColumn('snapshot_version', 'integer')
      .addColumn('sampled', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('report_events_site_time')
      .on('report_events')
      .columns(['site_id', 'time'])
      .execute();
    await db.schema
      .createTable('signal_minutes')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('minute', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('signal_minutes_pk', ['site_id', 'minute', 'kind'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of [
      'signal_minutes',
      'report_events',
      'traffic_top',
      'traffic_minutes',
      'report_batches',
    ])
      await db.schema.dropTable(table).execute();
  },
};
