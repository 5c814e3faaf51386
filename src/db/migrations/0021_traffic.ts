import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // The random salt each UTC day's visitor hashes are made with, shared by every instance: the
  // first to need a day's salt inserts it (insert-if-absent), the others read it. Salts of past
  // days are removed, so a stored hash can no longer be linked to an address, nor to another day.
  await db.schema
    .createTable('traffic_salts')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('salt', 'text', (c) => c.notNull())
    .execute()

  // A site's counts per UTC hour (`hour` is `YYYY-MM-DDTHH`), added to by every instance's
  // flushes (`n = n + excluded.n`). `website_id` has no foreign key: the counts of a deleted site
  // are read by no one and age out with the rest.
  await db.schema
    .createTable('traffic_hours')
    .addColumn('website_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .addColumn('page_views', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('bots', 'integer', (c) => c.notNull())
    .addColumn('not_found', 'integer', (c) => c.notNull())
    .addColumn('status_2xx', 'integer', (c) => c.notNull())
    .addColumn('status_3xx', 'integer', (c) => c.notNull())
    .addColumn('status_4xx', 'integer', (c) => c.notNull())
    .addColumn('status_5xx', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_hours_pk', ['website_id', 'hour'])
    .execute()

  // The top lists of a site's hour: `kind` is `path` (page views by path), `referrer` (page views
  // by referring host) or `missing` (answers of 404 by path, `referrer` the page that linked
  // there, '' when none). Each instance keeps a bounded number of keys per site and hour; the
  // rest are counted under the key `(other)`.
  await db.schema
    .createTable('traffic_keys')
    .addColumn('website_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('referrer', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_keys_pk', ['website_id', 'hour', 'kind', 'key', 'referrer'])
    .execute()

  // Who came in an hour, as salted hashes (never an address or a user agent): inserted if absent,
  // so the unique visitors of an hour or a day are exact however many instances saw them.
  await db.schema
    .createTable('traffic_visitors')
    .addColumn('website_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('visitor', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_visitors_pk', ['website_id', 'hour', 'visitor'])
    .execute()
  for (const table of ['traffic_hours', 'traffic_keys', 'traffic_visitors']) {
    await db.schema.createIndex(`${table}_hour_idx`).on(table).column('hour').execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['traffic_visitors', 'traffic_keys', 'traffic_hours', 'traffic_salts']) await db.schema.dropTable(table).execute()
}
