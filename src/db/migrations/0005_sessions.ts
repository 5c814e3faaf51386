import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Web site sessions, stored server-side so that they can be listed, revoked and shared by every
  // instance. The id is the SHA-256 of the secret in the cookie: the database never holds a
  // value that opens a session.
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .execute()
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute()

  // Failed sign-ins, counted per account and per client address over a sliding window; in the
  // database so the throttle holds across instances.
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sign_in_failures_subject_at_idx').on('sign_in_failures').columns(['subject', 'at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute()
  await db.schema.dropTable('sessions').execute()
}
