import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../db/types.ts'

export interface SessionWithUser extends SessionRow {
  email: string
  name: string | null
}

export class SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(session: SessionRow): Promise<unknown> {
    return this.db.insertInto('sessions').values(session).execute()
  }

  find(id: string): Promise<SessionWithUser | undefined> {
    return this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('sessions')
      .select(['users.email', 'users.name'])
      .where('sessions.id', '=', id)
      .executeTakeFirst()
  }

  extend(id: string, lastSeenAt: string, expiresAt: string): Promise<unknown> {
    return this.db.updateTable('sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute()
  }

  delete(id: string): Promise<unknown> {
    return this.db.deleteFrom('sessions').where('id', '=', id).execute()
  }

  /** Ends every session of a user but the one kept (if any); how many ended. */
  async deleteAllOf(userId: string, keep?: string): Promise<number> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId)
    if (keep) query = query.where('id', '!=', keep)
    const result = await query.executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  deleteExpired(now: string): Promise<unknown> {
    return this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute()
  }

  async recordFailure(subjects: string[], at: string): Promise<void> {
    await this.db
      .insertInto('sign_in_failures')
      .values(subjects.map((subject) => ({ subject, at })))
      .execute()
  }

  /** Failures of a subject since a time, and when the oldest of them happened. */
  async failuresSince(subject: string, since: string): Promise<{ count: number; oldest: string | null }> {
    const row = await this.db
      .selectFrom('sign_in_failures')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('at').as('oldest')])
      .where('subject', '=', subject)
      .where('at', '>', since)
      .executeTakeFirstOrThrow()
    return { count: Number(row.count), oldest: row.oldest ?? null }
  }

  clearFailures(subject: string): Promise<unknown> {
    return this.db.deleteFrom('sign_in_failures').where('subject', '=', subject).execute()
  }

  pruneFailures(before: string): Promise<unknown> {
    return this.db.deleteFrom('sign_in_failures').where('at', '<=', before).execute()
  }
}
