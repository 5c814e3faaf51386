import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { Database, WebsiteInvitationsTable } from '../db/types.ts'

/** Editors invited by email and not yet members. One query per method, but accepting (one transaction). */
export class InvitationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records an invitation; one already pending for the email stays as it was. */
  async insert(row: WebsiteInvitationsTable): Promise<void> {
    await this.db
      .insertInto('website_invitations')
      .values(row)
      .onConflict((oc) => oc.columns(['website_id', 'email']).doNothing())
      .execute()
  }

  /** A site's pending invitations, oldest first. */
  listOf(websiteId: string): Promise<WebsiteInvitationsTable[]> {
    return this.db.selectFrom('website_invitations').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('email').execute()
  }

  async countOf(websiteId: string): Promise<number> {
    const row = await this.db
      .selectFrom('website_invitations')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** Whether an invitation was removed. */
  async delete(websiteId: string, email: string): Promise<boolean> {
    const result = await this.db.deleteFrom('website_invitations').where('website_id', '=', websiteId).where('email', '=', email).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /**
   * Makes the user an editor of every site whose invitation names their email (but a site they
   * own), and removes those invitations; how many sites they were invited to.
   */
  accept(user: { id: string; email: string }, at: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('website_members')
        .columns(['website_id', 'user_id', 'role', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('website_invitations')
            .innerJoin('websites', 'websites.id', 'website_invitations.website_id')
            .select([
              'website_invitations.website_id',
              sql<string>`cast(${user.id} as text)`.as('user_id'),
              sql.lit('editor').as('role'),
              sql<string>`cast(${at} as text)`.as('created_at'),
            ])
            .where('website_invitations.email', '=', user.email)
            .where('websites.owner_id', '<>', user.id),
        )
        .onConflict((oc) => oc.columns(['website_id', 'user_id']).doNothing())
        .execute()
      const removed = await trx.deleteFrom('website_invitations').where('email', '=', user.email).executeTakeFirst()
      return Number(removed.numDeletedRows)
    })
  }
}
