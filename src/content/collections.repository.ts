import { type Kysely, sql } from 'kysely'
import type { Dialect } from '../db/connect.ts'
import type { CollectionRow, Database } from '../db/types.ts'

export interface CollectionWithCount extends CollectionRow {
  entry_count: number
}

/** Queries over collections and the live files they must not clash with. One query per method. */
export class CollectionsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  private withCount() {
    return this.db
      .selectFrom('collections')
      .selectAll('collections')
      .select((eb) =>
        eb
          .selectFrom('entries')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('entries.collection_id', '=', 'collections.id')
          .as('entry_count'),
      )
  }

  async list(websiteId: string): Promise<CollectionWithCount[]> {
    const rows = await this.withCount().where('website_id', '=', websiteId).orderBy('name').execute()
    return rows.map((row) => ({ ...row, entry_count: Number(row.entry_count) }))
  }

  async find(websiteId: string, name: string): Promise<CollectionWithCount | undefined> {
    const row = await this.withCount().where('website_id', '=', websiteId).where('name', '=', name).executeTakeFirst()
    return row && { ...row, entry_count: Number(row.entry_count) }
  }

  async namesOf(websiteId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('collections').select('name').where('website_id', '=', websiteId).execute()
    return rows.map((r) => r.name)
  }

  async count(websiteId: string): Promise<number> {
    const row = await this.db
      .selectFrom('collections')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  insert(row: CollectionRow): Promise<unknown> {
    return this.db.insertInto('collections').values(row).execute()
  }

  update(id: string, changes: Partial<Pick<CollectionRow, 'label' | 'fields' | 'removed_fields' | 'updated_at'>>): Promise<unknown> {
    return this.db.updateTable('collections').set(changes).where('id', '=', id).execute()
  }

  /** Paths of the files in the site's live version. */
  async livePaths(websiteId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('version_files')
      .innerJoin('websites', 'websites.current_version_id', 'version_files.version_id')
      .select('version_files.path')
      .where('websites.id', '=', websiteId)
      .execute()
    return rows.map((r) => r.path)
  }

  /** How many entries hold a non-null value under a data key (field names are [a-zA-Z0-9_] only). */
  async countHoldingValue(collectionId: string, fieldName: string): Promise<number> {
    const holds =
      this.dialect === 'postgres'
        ? sql<boolean>`(data::jsonb -> ${fieldName}) is not null and (data::jsonb -> ${fieldName}) <> 'null'::jsonb`
        : sql<boolean>`json_type(data, ${`$.${fieldName}`}) is not null and json_type(data, ${`$.${fieldName}`}) <> 'null'`
    const row = await this.db
      .selectFrom('entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('collection_id', '=', collectionId)
      .where(holds)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
