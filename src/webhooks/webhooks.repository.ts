/** Queries over webhooks, their events and deliveries. One query per method. */
import { type Kysely, sql } from 'kysely'
import type { WebhookEventType } from '../core/enums.ts'
import type { Executor } from '../db/access.ts'
import type { Database, WebhookDeliveryRow, WebhookRow } from '../db/types.ts'

/** A claimed delivery with what sending it needs. */
export interface DueDelivery {
  id: string
  attempts: number
  claim: string
  eventId: string
  body: string
  url: string
  secret: string
}

/** Due deliveries looked at per free slot when claiming, so busy webhooks at the head of the queue do not hide the rest. */
const CLAIM_CANDIDATES_PER_SLOT = 8

export class WebhooksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  listForSite(websiteId: string): Promise<WebhookRow[]> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('retired_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  }

  countForSite(websiteId: string): Promise<number> {
    return this.db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .where('retired_at', 'is', null)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n))
  }

  find(websiteId: string, webhookId: string): Promise<WebhookRow | undefined> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', webhookId)
      .where('website_id', '=', websiteId)
      .where('retired_at', 'is', null)
      .executeTakeFirst()
  }

  async insert(row: WebhookRow): Promise<void> {
    await this.db.insertInto('webhooks').values(row).execute()
  }

  async update(webhookId: string, changes: Partial<Pick<WebhookRow, 'url' | 'events' | 'enabled' | 'description' | 'updated_at'>>): Promise<void> {
    await this.db.updateTable('webhooks').set(changes).where('id', '=', webhookId).execute()
  }

  /** Removes a webhook with its deliveries. */
  async remove(webhookId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('webhooks').where('id', '=', webhookId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /** The enabled webhooks of a site that asked for `type` (their events are few: matched here). */
  async subscribedTo(db: Executor, websiteId: string, type: WebhookEventType): Promise<string[]> {
    const rows = await db
      .selectFrom('webhooks')
      .select(['id', 'events'])
      .where('website_id', '=', websiteId)
      .where('enabled', '=', 1)
      .where('retired_at', 'is', null)
      .execute()
    return rows.filter((row) => (JSON.parse(row.events) as string[]).includes(type)).map((row) => row.id)
  }

  async insertEvent(db: Executor, event: { id: string; website_id: string; type: WebhookEventType; body: string; created_at: string }): Promise<void> {
    await db.insertInto('webhook_events').values(event).execute()
  }

  async insertDeliveries(rows: WebhookDeliveryRow[], db: Executor = this.db): Promise<void> {
    if (rows.length > 0) await db.insertInto('webhook_deliveries').values(rows).execute()
  }

  /** Marks a deleted site's webhooks retired, in the deletion's transaction. */
  async retireForSite(db: Executor, websiteId: string, at: string): Promise<void> {
    await db.updateTable('webhooks').set({ retired_at: at }).where('website_id', '=', websiteId).where('retired_at', 'is', null).execute()
  }

  /** A webhook's deliveries with their event types, newest first. */
  deliveries(webhookId: string, limit: number) {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .selectAll('d')
      .select(['e.type'])
      .where('d.webhook_id', '=', webhookId)
      .orderBy('d.created_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
      .execute()
  }

  delivery(webhookId: string, deliveryId: string) {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .selectAll('d')
      .select(['e.type'])
      .where('d.webhook_id', '=', webhookId)
      .where('d.id', '=', deliveryId)
      .executeTakeFirst()
  }

  /**
   * Claims up to `limit` due deliveries of enabled webhooks for `claim` until `until`, fairly: no
   * webhook gets a delivery while one of its own is being sent (a slow endpoint takes one slot,
   * not all), and no website gets more than `perWebsite` in flight, so one owner's endpoints never
   * hold up the others'. Oldest due first among the rest. A delivery another sender claimed
   * meanwhile is not taken: the claim's update sets only rows still unclaimed.
   */
  async claimDue(claim: string, now: string, until: string, limit: number, perWebsite: number): Promise<string[]> {
    // Never claimed, or its claim has ended.
    const unclaimed = (column: string) => sql<boolean>`(${sql.ref(column)} is null or ${sql.ref(column)} < ${now})`
    const sending = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.webhook_id', 'w.website_id'])
      .where('d.status', '=', 'pending')
      .where('d.claimed_until', '>=', now)
      .execute()
    const busyWebhooks = new Set(sending.map((row) => row.webhook_id))
    const inFlight = new Map<string, number>()
    for (const row of sending) inFlight.set(row.website_id, (inFlight.get(row.website_id) ?? 0) + 1)
    const candidates = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.webhook_id', 'w.website_id'])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where(unclaimed('d.claimed_until'))
      .where('w.enabled', '=', 1)
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .limit(limit * CLAIM_CANDIDATES_PER_SLOT)
      .execute()
    const picked: string[] = []
    for (const row of candidates) {
      if (picked.length === limit) break
      const siteLoad = inFlight.get(row.website_id) ?? 0
      if (busyWebhooks.has(row.webhook_id) || siteLoad >= perWebsite) continue
      picked.push(row.id)
      busyWebhooks.add(row.webhook_id)
      inFlight.set(row.website_id, siteLoad + 1)
    }
    if (picked.length === 0) return []
    const rows = await this.db
      .updateTable('webhook_deliveries')
      .set({ claim, claimed_until: until })
      .where('id', 'in', picked)
      .where('status', '=', 'pending')
      .where(unclaimed('claimed_until'))
      .returning('id')
      .execute()
    return rows.map((row) => row.id)
  }

  /** What sending claimed deliveries needs. */
  async claimed(ids: string[], claim: string): Promise<DueDelivery[]> {
    if (ids.length === 0) return []
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.attempts', 'd.event_id', 'e.body', 'w.url', 'w.secret'])
      .where('d.id', 'in', ids)
      .where('d.claim', '=', claim)
      .execute()
    return rows.map((row) => ({ id: row.id, attempts: row.attempts, claim, eventId: row.event_id, body: row.body, url: row.url, secret: row.secret }))
  }

  /** Records an attempt of a delivery this sender still holds. */
  async recordAttempt(
    id: string,
    claim: string,
    outcome: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'next_attempt_at' | 'last_attempt_at' | 'last_status_code' | 'last_error' | 'finished_at'>,
  ): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ ...outcome, claim: null, claimed_until: null })
      .where('id', '=', id)
      .where('claim', '=', claim)
      .execute()
  }

  /** Gives claimed deliveries back without an attempt (a stopping server). */
  async release(ids: string[], claim: string): Promise<void> {
    if (ids.length === 0) return
    await this.db.updateTable('webhook_deliveries').set({ claim: null, claimed_until: null }).where('id', 'in', ids).where('claim', '=', claim).execute()
  }

  /** Removes finished deliveries older than `before`, events no delivery needs, and retired webhooks with nothing pending. */
  async sweep(before: string): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('finished_at', '<', before).execute()
    await this.db
      .deleteFrom('webhooks')
      .where('retired_at', 'is not', null)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as d')
              .select(sql.lit(1).as('one'))
              .whereRef('d.webhook_id', '=', 'webhooks.id')
              .where('d.status', '=', 'pending'),
          ),
        ),
      )
      .execute()
    await this.db
      .deleteFrom('webhook_events')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select(sql.lit(1).as('one')).whereRef('d.event_id', '=', 'webhook_events.id'))))
      .execute()
  }
}
