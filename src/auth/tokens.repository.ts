import type { Kysely } from 'kysely'
import { visibleWebsites } from '../db/access.ts'
import type { Database, TokenRow } from '../db/types.ts'

export interface TokenWithUser extends TokenRow {
  user_email: string
  user_name: string | null
}

export class TokensRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(token: TokenRow): Promise<unknown> {
    return this.db.insertInto('tokens').values(token).execute()
  }

  findByHash(tokenHash: string): Promise<TokenWithUser | undefined> {
    return this.db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .selectAll('tokens')
      .select(['users.email as user_email', 'users.name as user_name'])
      .where('tokens.token_hash', '=', tokenHash)
      .executeTakeFirst()
  }

  listByUser(userId: string): Promise<TokenRow[]> {
    return this.db.selectFrom('tokens').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').execute()
  }

  /** Those of these website ids the user owns or edits. */
  async visibleSiteIds(userId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return []
    const rows = await visibleWebsites(this.db, userId)
      .where('websites.id', 'in', [...ids])
      .select('websites.id')
      .execute()
    return rows.map((row) => row.id)
  }

  touch(id: string, at: string): Promise<unknown> {
    return this.db.updateTable('tokens').set({ last_used_at: at }).where('id', '=', id).execute()
  }

  /** Revokes a live token by id (only the user's own when userId is given); whether one was revoked. */
  async revoke(userId: string | null, id: string, at: string): Promise<boolean> {
    let query = this.db.updateTable('tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null)
    if (userId !== null) query = query.where('user_id', '=', userId)
    const result = await query.executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }
}
