import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Detection: each site's detector settings (JSON, absent = the defaults) and the automatic
 * blocks the detectors published, with their evidence, expiry and revocation.
 */
export const detection: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('detection_settings')
      .addColumn('site_id', 'text', (c) =>
        c.primaryKey().references('sites.id').onDelete('cascade'),
      )
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('automatic_blocks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('detector', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('evidence', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('allowed_by', 'text')
      .addColumn('expiry_built', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('automatic_blocks_site')
      .on('automatic_blocks')
      .columns(['site_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('automatic_blocks_expiry')
      .on('automatic_blocks')
      .columns(['expiry_built', 'expires_at'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('automatic_blocks').execute();
    await db.schema.dropTable('detection_settings').execute();
  },
};
