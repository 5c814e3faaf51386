import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A site password (scrypt, as account passwords) and when it was set: the unlock cookies a site
  // hands out name that moment, so setting a new password (or removing it) ends every one of them.
  await db.schema.alterTable('websites').addColumn('password_hash', 'text').execute()
  await db.schema.alterTable('websites').addColumn('password_set_at', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('websites').dropColumn('password_set_at').execute()
  await db.schema.alterTable('websites').dropColumn('password_hash').execute()
}
