import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Each site's prexy configuration (routes and substitution rule sets), stored whole as the
 * validated JSON document; a site without a row has none, and its snapshots carry none.
 */
export const proxyConfigs: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('proxy_configs')
      .addColumn('site_id', 'text', (c) =>
        c.primaryKey().references('sites.id').onDelete('cascade'),
      )
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('proxy_configs').execute();
  },
};
