import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Server-wide secrets shared by every instance (the upload URL signing key). Generated on first
  // use with an insert-if-absent, so concurrent first uses agree on one value; never in the repo.
  await db.schema
    .createTable('secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.references('blobs.hash'))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute()
  // A publish by hash looks up the caller's completed uploads by hash.
  await db.schema.createIndex('uploads_user_hash_idx').on('uploads').columns(['user_id', 'sha256']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('uploads').execute()
  await db.schema.dropTable('secrets').execute()
}
