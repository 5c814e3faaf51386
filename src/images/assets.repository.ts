import type { Kysely } from 'kysely'
import type { AssetRow, Database } from '../db/types.ts'
import { imageExtension } from './image-type.ts'

/** Queries over the image library. One query per method. */
export class AssetsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The library of a collection, or the site-wide one when collectionId is null. */
  private library(websiteId: string, collectionId: string | null) {
    const query = this.db.selectFrom('assets').selectAll().where('website_id', '=', websiteId)
    return collectionId === null ? query.where('collection_id', 'is', null) : query.where('collection_id', '=', collectionId)
  }

  findBySource(websiteId: string, collectionId: string | null, sourceUrl: string): Promise<AssetRow | undefined> {
    return this.library(websiteId, collectionId).where('source_url', '=', sourceUrl).executeTakeFirst()
  }

  /** Bytes imported without a URL (uploads), kept once per library. */
  findUnsourced(websiteId: string, collectionId: string | null, hash: string): Promise<AssetRow | undefined> {
    return this.library(websiteId, collectionId).where('source_url', 'is', null).where('hash', '=', hash).executeTakeFirst()
  }

  /** Any asset of the site with these bytes: what serving /_assets/{hash}.{ext} needs. */
  findByHash(websiteId: string, hash: string): Promise<AssetRow | undefined> {
    return this.db
      .selectFrom('assets')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('hash', '=', hash)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst()
  }

  /** The site's image served at /_assets/{hash}.{ext}: an asset with these bytes whose library URL has this extension. */
  async findServed(websiteId: string, hash: string, ext: string): Promise<AssetRow | undefined> {
    const row = await this.findByHash(websiteId, hash)
    return row && imageExtension(row.content_type) === ext ? row : undefined
  }

  insert(row: AssetRow): Promise<unknown> {
    return this.db.insertInto('assets').values(row).execute()
  }
}
