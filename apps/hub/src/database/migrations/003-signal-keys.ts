import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Each site's key for hashing account identifiers in signals; written into its snapshots.
 * Nullable: sites created before this migration get one at their next build.
 */
export const signalKeys: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sites').addColumn('signal_key', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sites').dropColumn('signal_key').execute();
  },
};
