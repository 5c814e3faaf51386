import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A site's webhook endpoints. `website_id` has no foreign key: when the site is deleted, its
  // webhooks outlive it (`retired_at` set, listed nowhere, sent no new event) until the
  // `site.deleted` deliveries written with the deletion are done, and are then removed.
  // `secret` is the signing secret encrypted with a server key (webhooks/webhook-secrets.ts).
  // `events` is a JSON array of event types; `enabled` is 1 or 0.
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute()
  await db.schema.createIndex('webhooks_website_idx').on('webhooks').column('website_id').execute()

  // The outbox: each event that some webhook of its site asked for, written in the transaction of
  // the change it reports, with the exact body every delivery of it sends.
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('website_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  // One event sent to one webhook: pending until delivered or failed for good. A sender claims a
  // due row by setting `claim` and `claimed_until` (a lease): no other instance takes it before
  // the lease ends, and one that crashed mid-send loses it then.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('claim', 'text')
    .addColumn('claimed_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute()
  // The senders' question: which pending deliveries are due.
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute()
  // A webhook's delivery log, newest first.
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute()
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute()
  // Finished deliveries are removed after a while.
  await db.schema.createIndex('webhook_deliveries_finished_idx').on('webhook_deliveries').column('finished_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhook_events').execute()
  await db.schema.dropTable('webhooks').execute()
}
