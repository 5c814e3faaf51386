import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A draft: a working copy of a site's files, started from one of its versions (the base) and
  // written file by file until it is published as a new version or discarded. A draft nobody
  // writes to expires (`expires_at`, moved on by every write) and is then neither seen nor kept.
  await db.schema
    .createTable('drafts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('base_version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  // A site's open drafts are listed and counted against the limit; the sweep finds expired ones.
  await db.schema.createIndex('drafts_website_idx').on('drafts').columns(['website_id', 'expires_at']).execute()
  await db.schema.createIndex('drafts_expiry_idx').on('drafts').column('expires_at').execute()

  // A draft's files, as a version's: path -> blob. The blob's foreign key keeps its row (and so its
  // bytes) while a draft holds it, as version files and uploads do.
  await db.schema
    .createTable('draft_files')
    .addColumn('draft_id', 'text', (c) => c.notNull().references('drafts.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().references('blobs.hash'))
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('draft_files_pk', ['draft_id', 'path'])
    .execute()
  // Whether anything still refers to a blob is asked by hash (blobs/blobs.repository.ts).
  await db.schema.createIndex('draft_files_hash_idx').on('draft_files').column('hash').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('draft_files').execute()
  await db.schema.dropTable('drafts').execute()
}
