import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A request that a person make a version live: asked for by a caller (often an agent's token),
  // decided on the dashboard by the site's owner or an editor. `status` is pending, approved,
  // declined or cancelled; `reason` is a decline's.
  await db.schema
    .createTable('promotion_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('reason', 'text')
    .execute()
  await db.schema.createIndex('promotion_requests_site').on('promotion_requests').columns(['website_id', 'status', 'created_at']).execute()

  // Work to do at a time: a version's promotion (`kind` promote). Every instance looks for due rows
  // each minute; the one whose conditional UPDATE moves a row from pending to running (or takes a
  // running row whose lease ran out) runs it, so it runs once however many instances share the
  // database. `status`: pending, running, done, failed, cancelled; `error` says why one failed.
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('claim', 'text')
    .addColumn('claimed_until', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('error', 'text')
    .execute()
  await db.schema.createIndex('schedules_due').on('schedules').columns(['status', 'run_at']).execute()
  await db.schema.createIndex('schedules_site').on('schedules').columns(['website_id', 'run_at']).execute()

  // From when a version that is not live is no longer served at its preview host; null: as long as it exists.
  await db.schema.alterTable('versions').addColumn('preview_expires_at', 'text').execute()

  // An expiry a caller set on a draft: each write still moves its expires_at on, but never past this.
  await db.schema.alterTable('drafts').addColumn('expires_by', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('drafts').dropColumn('expires_by').execute()
  await db.schema.alterTable('versions').dropColumn('preview_expires_at').execute()
  await db.schema.dropTable('schedules').execute()
  await db.schema.dropTable('promotion_requests').execute()
}
