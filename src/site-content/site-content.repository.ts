import type { Kysely } from 'kysely'
import type { Database, EntryRow } from '../db/types.ts'

/** Queries only the public site needs: what is live at an instant. One query per method. */
export class SiteContentRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Live entries newest first; `offset` serves numbered listing pages. */
  live(collectionId: string, now: string, limit: number, offset = 0): Promise<EntryRow[]> {
    return this.db
      .selectFrom('entries')
      .selectAll()
      .where('collection_id', '=', collectionId)
      .where('published_at', '<=', now)
      .orderBy('published_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute()
  }

  async countLive(collectionId: string, now: string): Promise<number> {
    const row = await this.db
      .selectFrom('entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('collection_id', '=', collectionId)
      .where('published_at', '<=', now)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** Slugs and dates of the live entries of every collection of a site (for sitemap.xml). */
  liveSlugs(websiteId: string, now: string, limit: number): Promise<Array<{ name: string; slug: string; updatedAt: string }>> {
    return this.db
      .selectFrom('entries')
      .innerJoin('collections', 'collections.id', 'entries.collection_id')
      .select(['collections.name as name', 'entries.slug as slug', 'entries.updated_at as updatedAt'])
      .where('collections.website_id', '=', websiteId)
      .where('entries.published_at', '<=', now)
      .orderBy('collections.name')
      .orderBy('entries.published_at', 'desc')
      .limit(limit)
      .execute()
  }

  /** When the next scheduled entry of the site goes live: cached pages are good until then. */
  async nextScheduled(websiteId: string, now: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('entries')
      .innerJoin('collections', 'collections.id', 'entries.collection_id')
      .select((eb) => eb.fn.min('entries.published_at').as('next'))
      .where('collections.website_id', '=', websiteId)
      .where('entries.published_at', '>', now)
      .executeTakeFirst()
    return (row?.next as string | null | undefined) ?? null
  }
}
