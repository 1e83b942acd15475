import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Operators' dashboard sessions: a session is found by the SHA-256 of its cookie's token (the
 * token itself is never stored), carries its CSRF token and an absolute expiry.
 */
export const sessions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_expiry').on('sessions').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('sessions').execute();
  },
};
