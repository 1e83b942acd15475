import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../dialect.js';

/**
 * Users, products and the meta table. Column types are the portable subset of both databases;
 * only the generated id differs (SQLite's rowid alias versus a PostgreSQL identity column).
 */
export function initial(dialect: Dialect): Migration {
  const id = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey();
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'integer', id)
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('products')
        .addColumn('id', 'integer', id)
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('price_cents', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('app_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
