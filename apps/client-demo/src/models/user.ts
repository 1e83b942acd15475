/** Users: look-ups by e-mail (login) and id (session), and creation (seed). */
import type { Kysely, Selectable } from 'kysely';
import type { DemoSchema, UsersTable } from '../db/schema.js';

export type User = Selectable<UsersTable>;

/** E-mail addresses are compared lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class UserModel {
  constructor(private readonly db: Kysely<DemoSchema>) {}

  findByEmail(email: string): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', normalizeEmail(email))
      .executeTakeFirst();
  }

  findById(id: number): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
