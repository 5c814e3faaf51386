/**
 * Who may see a website: its owner and its editors, and nobody else; a deleted website is seen by
 * no one. This one query fragment is the base of every visibility check, in every repository.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Database } from './types.ts'

export type Executor = Kysely<Database> | Transaction<Database>

/** Websites the user owns or edits, with the caller's membership row joined as `member`. */
export function visibleWebsites(db: Executor, userId: string) {
  return db
    .selectFrom('websites')
    .leftJoin('website_members as member', (join) => join.onRef('member.website_id', '=', 'websites.id').on('member.user_id', '=', userId))
    .where((eb) => eb.or([eb('websites.owner_id', '=', userId), eb('member.user_id', '=', userId)]))
    .where('websites.status', '!=', 'deleted')
}

/** A website the caller may work on, as features other than websites need it. */
export interface VisibleSite {
  id: string
  slug: string
}

/** Visibility checks for features that work inside a website (content, images). */
export class WebsiteAccess {
  constructor(private readonly db: Kysely<Database>) {}

  /** The website if the user owns or edits it; undefined otherwise, as if it did not exist. */
  findVisible(userId: string, websiteId: string): Promise<VisibleSite | undefined> {
    return visibleWebsites(this.db, userId).where('websites.id', '=', websiteId).select(['websites.id', 'websites.slug']).executeTakeFirst()
  }
}
