/** Table types of webhooks for Kysely (db/types.ts puts them in the Database). */
import type { Selectable } from 'kysely'
import type { DeliveryStatus, WebhookEventType } from '../core/enums.ts'

/** A site's webhook endpoint (migration 0017 says why `website_id` has no foreign key). */
export interface WebhooksTable {
  /** `whk_...` */
  id: string
  website_id: string
  url: string
  /** JSON array of WebhookEventType. */
  events: string
  description: string | null
  /** The signing secret, encrypted with a server key (webhooks/webhook-secrets.ts). */
  secret: string
  /** 1 or 0: a disabled webhook is sent nothing and its pending deliveries wait. */
  enabled: number
  created_by: string
  created_at: string
  updated_at: string
  /** When its site was deleted: listed nowhere, removed once its last delivery is done. */
  retired_at: string | null
}

/** An event some webhook asked for, with the exact body each delivery sends. */
export interface WebhookEventsTable {
  /** `evt_...`: also the `id` of the body and the `webhook-id` header. */
  id: string
  website_id: string
  type: WebhookEventType
  body: string
  created_at: string
}

/** One event sent to one webhook, with its attempts so far. */
export interface WebhookDeliveriesTable {
  /** `dlv_...` */
  id: string
  webhook_id: string
  event_id: string
  status: DeliveryStatus
  attempts: number
  /** When the next attempt is due; null once delivered or failed. */
  next_attempt_at: string | null
  last_attempt_at: string | null
  last_status_code: number | null
  last_error: string | null
  /** The sender holding the row, until `claimed_until`. */
  claim: string | null
  claimed_until: string | null
  created_at: string
  finished_at: string | null
}

export type WebhookRow = Selectable<WebhooksTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
