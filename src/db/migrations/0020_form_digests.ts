import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // How a site's form submissions are e-mailed: `each` as they come, `daily` as one digest a day.
  await db.schema
    .alterTable('websites')
    .addColumn('form_notify_mode', 'text', (c) => c.notNull().defaultTo('each'))
    .execute()

  // The days whose digest was sent (or is being sent): the instance that inserts a day's row is
  // the one that sends it, so several instances on one database send each digest once.
  // `day` is the UTC date (YYYY-MM-DD) the digest covers; `messages` how many it sent, once done.
  await db.schema
    .createTable('form_digest_days')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('messages', 'integer')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('form_digest_days').execute()
  await db.schema.alterTable('websites').dropColumn('form_notify_mode').execute()
}
