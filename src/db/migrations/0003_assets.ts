import { type Kysely, sql } from 'kysely'

/**
 * The image library: per collection (or per site, collection_id null), one row per imported
 * image. The bytes live in the content-addressed blob store, so identical images share a blob.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('collection_id', 'text', (c) => c.references('collections.id').onDelete('cascade'))
    .addColumn('source_url', 'text')
    .addColumn('hash', 'text', (c) => c.notNull().references('blobs.hash'))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  // Once per (library, URL). NULLs are distinct in unique indexes of both dialects, so the
  // site-wide library (collection_id null) is keyed by coalesce(); bytes without a URL
  // (uploads) are kept once per (library, hash).
  await sql`create unique index assets_source_uq on assets (website_id, coalesce(collection_id, ''), source_url) where source_url is not null`.execute(db)
  await sql`create unique index assets_bytes_uq on assets (website_id, coalesce(collection_id, ''), hash) where source_url is null`.execute(db)
  // Serving /_assets/{hash}.{ext} looks assets up by site and hash.
  await db.schema.createIndex('assets_hash_idx').on('assets').columns(['website_id', 'hash']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('assets').execute()
}
