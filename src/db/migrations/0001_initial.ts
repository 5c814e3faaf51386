import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_hint', 'text', (c) => c.notNull())
    .addColumn('access', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('tokens_user_idx').on('tokens').column('user_id').execute()

  await db.schema
    .createTable('websites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('current_version_id', 'text')
    .addColumn('last_version_number', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('websites_owner_idx').on('websites').columns(['owner_id', 'updated_at']).execute()

  await db.schema
    .createTable('website_members')
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('website_members_pk', ['website_id', 'user_id'])
    .execute()
  await db.schema.createIndex('website_members_user_idx').on('website_members').column('user_id').execute()

  await db.schema
    .createTable('versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('instruction', 'text')
    .addColumn('current_phase', 'text')
    .addColumn('progress_message', 'text')
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('versions_website_number_uq', ['website_id', 'number'])
    .execute()
  // The publish rate limit counts a user's recent versions.
  await db.schema.createIndex('versions_creator_idx').on('versions').columns(['created_by', 'created_at']).execute()

  await db.schema
    .createTable('blobs')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('br_size', 'bigint')
    .addColumn('gzip_size', 'bigint')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('version_files')
    .addColumn('version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().references('blobs.hash'))
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('version_files_pk', ['version_id', 'path'])
    .execute()
  await db.schema.createIndex('version_files_hash_idx').on('version_files').column('hash').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['version_files', 'blobs', 'versions', 'website_members', 'websites', 'tokens', 'users']) {
    await db.schema.dropTable(table).execute()
  }
}
