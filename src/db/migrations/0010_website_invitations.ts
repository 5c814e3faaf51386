import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Editors invited by email: each becomes a member when an account with that email signs up or
  // signs in, so that inviting never tells whether the email has an account.
  await db.schema
    .createTable('website_invitations')
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('website_invitations_pk', ['website_id', 'email'])
    .execute()
  await db.schema.createIndex('website_invitations_email_idx').on('website_invitations').column('email').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('website_invitations').execute()
}
