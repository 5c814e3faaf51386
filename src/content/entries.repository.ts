import type { Kysely } from 'kysely'
import type { Executor } from '../db/access.ts'
import type { Database, EntryRow } from '../db/types.ts'

/** More work for the transaction of a write: it commits, or rolls back, with the write (webhook events). */
export type AlsoRecord = (trx: Executor) => Promise<void>

/** A position in the listing order: newest published_at first, ties broken by id, descending. */
export interface EntryPosition {
  publishedAt: string
  id: string
}

/** Queries over entries. One query per method; listings are keyset-paged on entries_listing_idx. */
export class EntriesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** One page in listing order (scheduled entries included), after `after` when given. */
  page(collectionId: string, limit: number, after?: EntryPosition): Promise<EntryRow[]> {
    let query = this.db.selectFrom('entries').selectAll().where('collection_id', '=', collectionId)
    if (after) {
      // A row-value comparison: both SQLite and PostgreSQL seek the index to it instead of scanning.
      query = query.where((eb) => eb(eb.refTuple('published_at', 'id'), '<', eb.tuple(after.publishedAt, after.id)))
    }
    return query.orderBy('published_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
  }

  findBySlug(collectionId: string, slug: string): Promise<EntryRow | undefined> {
    return this.db.selectFrom('entries').selectAll().where('collection_id', '=', collectionId).where('slug', '=', slug).executeTakeFirst()
  }

  findById(collectionId: string, id: string): Promise<EntryRow | undefined> {
    return this.db.selectFrom('entries').selectAll().where('collection_id', '=', collectionId).where('id', '=', id).executeTakeFirst()
  }

  /** The stored entries among the given slugs (a batch looks its items up in one query). */
  findBySlugs(collectionId: string, slugs: string[]): Promise<EntryRow[]> {
    if (slugs.length === 0) return Promise.resolve([])
    return this.db.selectFrom('entries').selectAll().where('collection_id', '=', collectionId).where('slug', 'in', slugs).execute()
  }

  insert(row: EntryRow, also?: AlsoRecord): Promise<unknown> {
    return this.db.transaction().execute(async (trx) => {
      await trx.insertInto('entries').values(row).execute()
      await also?.(trx)
    })
  }

  /** Inserts many rows in chunks (imports and tests); each chunk is one statement. */
  async insertMany(rows: EntryRow[], chunk = 500): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += chunk)
        await trx
          .insertInto('entries')
          .values(rows.slice(i, i + chunk))
          .execute()
    })
  }

  /** Inserts and replaces rows in one transaction: all of them or none. */
  async writeMany(inserts: EntryRow[], replaces: EntryRow[], also?: AlsoRecord): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // 100 rows of 8 columns stay far below either dialect's limit on bound parameters.
      if (inserts.length > 0) await trx.insertInto('entries').values(inserts).execute()
      for (const { id, collection_id: _c, slug: _s, ...row } of replaces) await trx.updateTable('entries').set(row).where('id', '=', id).execute()
      await also?.(trx)
    })
  }

  replace(id: string, row: Omit<EntryRow, 'id' | 'collection_id' | 'slug'>, also?: AlsoRecord): Promise<unknown> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('entries').set(row).where('id', '=', id).execute()
      await also?.(trx)
    })
  }

  async delete(collectionId: string, id: string, also?: AlsoRecord): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('entries').where('collection_id', '=', collectionId).where('id', '=', id).executeTakeFirst()
      const deleted = Number(result.numDeletedRows) > 0
      if (deleted) await also?.(trx)
      return deleted
    })
  }
}
