/**
 * The outbox: WebhookEvents recorded as rows in the caller's transaction, one event and one
 * pending delivery per webhook that asked for it, due at once. The senders (webhook-sender.ts) of
 * every instance take them from there.
 */
import type { WebhookEventType } from '../core/enums.ts'
import { newId, nowIso } from '../core/ids.ts'
import type { Executor } from '../db/access.ts'
import type { WebhookEvents } from './webhook-events.ts'
import type { WebhooksRepository } from './webhooks.repository.ts'

export class WebhookOutbox implements WebhookEvents {
  constructor(private readonly repo: WebhooksRepository) {}

  emit(db: Executor, websiteId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
    return this.emitEach(db, websiteId, type, [data])
  }

  async emitEach(db: Executor, websiteId: string, type: WebhookEventType, items: Array<Record<string, unknown>>): Promise<void> {
    if (items.length === 0) return
    const webhookIds = await this.repo.subscribedTo(db, websiteId, type)
    for (const data of webhookIds.length > 0 ? items : []) await this.record(db, websiteId, type, data, webhookIds)
  }

  /** The event's row, with the exact body every delivery sends, and a delivery due now per webhook. */
  private async record(db: Executor, websiteId: string, type: WebhookEventType, data: Record<string, unknown>, webhookIds: string[]): Promise<void> {
    const id = newId('evt')
    const createdAt = nowIso()
    const body = JSON.stringify({ id, type, createdAt, websiteId, data })
    await this.repo.insertEvent(db, { id, website_id: websiteId, type, body, created_at: createdAt })
    await this.repo.insertDeliveries(
      webhookIds.map((webhookId) => ({
        id: newId('dlv'),
        webhook_id: webhookId,
        event_id: id,
        status: 'pending',
        attempts: 0,
        next_attempt_at: createdAt,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        claim: null,
        claimed_until: null,
        created_at: createdAt,
        finished_at: null,
      })),
      db,
    )
  }

  /**
   * A site's deletion, in its transaction: `site.deleted` for the webhooks that asked for it, then
   * every webhook of the site retired (removed once its deliveries are done).
   */
  async siteDeleted(db: Executor, websiteId: string, data: Record<string, unknown>): Promise<void> {
    await this.emit(db, websiteId, 'site.deleted', data)
    await this.repo.retireForSite(db, websiteId, nowIso())
  }
}
