import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** The first schema. Column types are the portable subset of SQLite and PostgreSQL. */
export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('sites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('rules_revision', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('built_revision', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed_revision', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('site_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createTable('rules')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('rules_pk', ['site_id', 'rule_id'])
      .execute();
    await db.schema
      .createTable('datasets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('bytes', 'integer', (c) => c.notNull())
      .addColumn('entries', 'integer', (c) => c.notNull())
      .addColumn('lines', 'integer', (c) => c.notNull())
      .addColumn('skipped_lines', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('datasets_kind_name', ['kind', 'name'])
      .execute();
    await db.schema
      .createTable('snapshots')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('bytes', 'integer', (c) => c.notNull())
      .addColumn('rules_revision', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('snapshots_pk', ['site_id', 'version'])
      .execute();
    await db.schema.createIndex('snapshots_sha256').on('snapshots').column('sha256').execute();
    await db.schema
      .createTable('builds')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('rules_revision', 'integer', (c) => c.notNull())
      .addColumn('version', 'integer')
      .addColumn('error', 'text')
      .addColumn('hub_instance', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema
      .createIndex('builds_site')
      .on('builds')
      .columns(['site_id', 'started_at'])
      .execute();
    await db.schema
      .createTable('instances')
      .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('snapshot_version', 'integer')
      .addColumn('user_agent', 'text')
      .addColumn('last_seen', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('instances_pk', ['site_id', 'instance_id'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of [
      'instances',
      'builds',
      'snapshots',
      'datasets',
      'rules',
      'site_keys',
      'sites',
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
