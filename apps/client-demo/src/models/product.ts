/** Products of the demo shop: the list page and the detail page. */
import type { Kysely, Selectable } from 'kysely';
import type { DemoSchema, ProductsTable } from '../db/schema.js';

export type Product = Selectable<ProductsTable>;

export class ProductModel {
  constructor(private readonly db: Kysely<DemoSchema>) {}

  list(): Promise<Product[]> {
    return this.db.selectFrom('products').selectAll().orderBy('name').execute();
  }

  findBySlug(slug: string): Promise<Product | undefined> {
    return this.db.selectFrom('products').selectAll().where('slug', '=', slug).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('products')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

/** `1999` -> `$19.99` */
export function formatPrice(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
