import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A blob is removed only once nothing refers to it: that question, and each foreign-key check
  // of a blob row's delete, looks up every referring column by hash alone. These two were
  // indexed only behind their owner's column, so each lookup read the whole table.
  await db.schema.createIndex('assets_blob_idx').on('assets').column('hash').execute()
  await db.schema.createIndex('uploads_blob_idx').on('uploads').column('sha256').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('uploads_blob_idx').execute()
  await db.schema.dropIndex('assets_blob_idx').execute()
}
