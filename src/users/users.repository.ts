import type { Kysely } from 'kysely'
import type { Database, UserRow } from '../db/types.ts'

export class UsersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(user: UserRow): Promise<unknown> {
    return this.db.insertInto('users').values(user).execute()
  }

  findById(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
  }

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
  }

  setPasswordHash(userId: string, passwordHash: string): Promise<unknown> {
    return this.db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute()
  }
}
