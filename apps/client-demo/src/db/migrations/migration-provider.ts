import type { Migration, MigrationProvider } from 'kysely/migration';
import type { Dialect } from '../dialect.js';
import { initial } from './001-initial.js';

/**
 * Every migration, by name; names sort in the order they apply. Never rename or edit one.
 * Compiled into the app (no directory scanning, so `dist/` is self-contained).
 */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '001-initial': initial(dialect),
  };
  return { getMigrations: async () => migrations };
}
