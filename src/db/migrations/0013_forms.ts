import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // The forms a version's pages declare, found at publish: only the version a host serves takes
  // posts to them. `fields` is JSON text of [{name, type, required}].
  await db.schema
    .createTable('version_forms')
    .addColumn('version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('version_forms_pk', ['version_id', 'name'])
    .execute()

  // What visitors sent. `data` is JSON text of {field: value}; `email` the sender's address when a
  // field gave a valid one (lowercased), for replies and for deleting a person's submissions.
  await db.schema
    .createTable('form_submissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('form', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('spam', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  // The inbox reads a form's submissions newest first; retention and deletion by address find theirs.
  await db.schema.createIndex('form_submissions_inbox_idx').on('form_submissions').columns(['website_id', 'form', 'created_at', 'id']).execute()
  await db.schema.createIndex('form_submissions_email_idx').on('form_submissions').columns(['website_id', 'email']).execute()
  await db.schema.createIndex('form_submissions_age_idx').on('form_submissions').columns(['created_at']).execute()

  // Files sent with a submission: blobs, kept while a submission holds them.
  await db.schema
    .createTable('form_files')
    .addColumn('submission_id', 'text', (c) => c.notNull().references('form_submissions.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().references('blobs.hash'))
    .addPrimaryKeyConstraint('form_files_pk', ['submission_id', 'position'])
    .execute()
  await db.schema.createIndex('form_files_hash_idx').on('form_files').column('hash').execute()

  // Per site: who is e-mailed each submission (JSON text of addresses; null: the owner), and how
  // many days submissions are kept (null: kept until deleted).
  await db.schema.alterTable('websites').addColumn('form_notify', 'text').execute()
  await db.schema.alterTable('websites').addColumn('form_retention_days', 'integer').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('websites').dropColumn('form_retention_days').execute()
  await db.schema.alterTable('websites').dropColumn('form_notify').execute()
  await db.schema.dropTable('form_files').execute()
  await db.schema.dropTable('form_submissions').execute()
  await db.schema.dropTable('version_forms').execute()
}
