import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('collections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    // JSON text of Field[]: the current fields, and removed ones whose stored values are kept.
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('removed_fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('collections_website_name_uq', ['website_id', 'name'])
    .execute()

  await db.schema
    .createTable('entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('rendered', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addUniqueConstraint('entries_collection_slug_uq', ['collection_id', 'slug'])
    .execute()
  // The listing order (newest publishedAt first, ties by id) is walked by keyset pagination.
  await db.schema.createIndex('entries_listing_idx').on('entries').columns(['collection_id', 'published_at desc', 'id desc']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('entries').execute()
  await db.schema.dropTable('collections').execute()
}
