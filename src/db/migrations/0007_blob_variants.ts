import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Variants are made after a blob is stored (blobs/blob-variants.ts): while they are, the row holds
  // the content type they are made for, so a process that stops meanwhile leaves work to resume.
  await db.schema.alterTable('blobs').addColumn('variants_type', 'text').execute()
  await db.schema.createIndex('blobs_variants_pending_idx').on('blobs').column('hash').where(sql.ref('variants_type'), 'is not', null).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('blobs_variants_pending_idx').execute()
  await db.schema.alterTable('blobs').dropColumn('variants_type').execute()
}
