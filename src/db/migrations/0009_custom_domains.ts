import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A site's own domains. The domain is the key: a domain belongs to one site at most, and the
  // serving and TLS questions ("which site is this host?") are one primary-key lookup. It is stored
  // lowercase in ASCII (punycode for IDNs) without a trailing dot, so one spelling means one row.
  // `challenge` is the value of the TXT record that proves control of the domain; `verified_at`
  // stays null until it is seen, and only verified domains are served.
  await db.schema
    .createTable('custom_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addColumn('last_checked_at', 'text')
    .addColumn('last_error', 'text')
    .execute()
  // A site's domains are listed and counted on its dashboard page.
  await db.schema.createIndex('custom_domains_website_idx').on('custom_domains').column('website_id').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('custom_domains').execute()
}
