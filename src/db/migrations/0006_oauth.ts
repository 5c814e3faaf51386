import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // What the OAuth authorization server (oidc-provider) stores: clients, grants, codes, tokens,
  // interactions and its sessions, one row per model instance, its payload as JSON.
  await db.schema
    .createTable('oauth_models')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('user_code', 'text')
    .addColumn('uid', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('consumed_at', 'text')
    .addPrimaryKeyConstraint('oauth_models_pk', ['model', 'id'])
    .execute()
  await db.schema.createIndex('oauth_models_grant_idx').on('oauth_models').column('grant_id').execute()
  await db.schema.createIndex('oauth_models_uid_idx').on('oauth_models').column('uid').execute()
  await db.schema.createIndex('oauth_models_expires_idx').on('oauth_models').column('expires_at').execute()

  // An app a person connected (consented to): one per person and client, with the grant that
  // holds its tokens, so the dashboard can list it and disconnect it.
  await db.schema
    .createTable('oauth_connections')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('client_name', 'text', (c) => c.notNull())
    .addColumn('redirect_host', 'text', (c) => c.notNull())
    .addColumn('first_used_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_connections_pk', ['user_id', 'client_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_connections').execute()
  await db.schema.dropTable('oauth_models').execute()
}
