import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // What a token may do and which sites it reaches: JSON arrays of capability names and website
  // ids; null means no limit, so every token made before keeps working as it did.
  await db.schema.alterTable('tokens').addColumn('capabilities', 'text').execute()
  await db.schema.alterTable('tokens').addColumn('sites', 'text').execute()
  // The same for an app a person connected over OAuth, as they chose on the consent page.
  await db.schema.alterTable('oauth_connections').addColumn('capabilities', 'text').execute()
  await db.schema.alterTable('oauth_connections').addColumn('sites', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_connections').dropColumn('sites').execute()
  await db.schema.alterTable('oauth_connections').dropColumn('capabilities').execute()
  await db.schema.alterTable('tokens').dropColumn('sites').execute()
  await db.schema.alterTable('tokens').dropColumn('capabilities').execute()
}
