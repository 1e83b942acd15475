import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The trace id of a raw event's request (from the client's `traceparent`), so the dashboard can
 * show the request's trace from Jaeger; null for events of untraced requests and older events.
 */
export const eventTraces: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('report_events').addColumn('trace_id', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('report_events').dropColumn('trace_id').execute();
  },
};
