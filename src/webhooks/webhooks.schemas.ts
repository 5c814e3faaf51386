/** Shapes of webhooks and their deliveries: the single source for validation, types and OpenAPI. */
import { type Static, Type } from 'typebox'
import { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from '../core/enums.ts'
import { ID_MAX_CHARS, WEBHOOK_DELIVERIES_LISTED, WEBHOOK_DESCRIPTION_MAX_CHARS, WEBHOOK_URL_MAX_CHARS, WEBHOOKS_PER_SITE } from '../core/limits.ts'
import { Nullable, ref, Timestamp } from '../core/schemas.ts'

export const WebhookIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Webhook id (whk_...).' })
export const DeliveryIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Delivery id (dlv_...).' })

export const WebhookEventTypeSchema = Type.Enum(WEBHOOK_EVENT_TYPES, {
  $id: 'WebhookEventType',
  description:
    '`version.published` (every new version), `version.promoted` (a version went live: a publish that promotes, a promotion, a rollback), `site.deleted`, `entry.changed` (an entry created, updated or deleted), `form.submitted`, `promotion.requested` (a version asked to go live) and `promotion.decided` (a person approved or declined it).',
})

const url = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX_CHARS,
  description: 'Where deliveries are POSTed: an https URL (http only for hosts the operator allows), reachable on a public address.',
})
const events = Type.Array(ref(WebhookEventTypeSchema), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The events sent to it.',
})
const description = Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX_CHARS, description: 'A note for people: what the endpoint is.' })

export const CreateWebhookRequestSchema = Type.Object(
  { url, events, description: Type.Optional(description) },
  { $id: 'CreateWebhookRequest', additionalProperties: false },
)

export const UpdateWebhookRequestSchema = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries: nothing new is recorded, pending ones wait until it is true again.' })),
    description: Type.Optional(Nullable(description)),
  },
  { $id: 'UpdateWebhookRequest', additionalProperties: false, minProperties: 1 },
)

const webhookProperties = {
  webhookId: Type.String({ description: 'whk_...' }),
  websiteId: Type.String(),
  url: Type.String(),
  events: Type.Array(ref(WebhookEventTypeSchema)),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

export const WebhookSchema = Type.Object(webhookProperties, { $id: 'Webhook' })

export const CreatedWebhookSchema = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({
      description: 'The signing secret (`whsec_` and base64), shown this once: deliveries carry `webhook-signature`, its HMAC-SHA256 per Standard Webhooks.',
    }),
  },
  { $id: 'CreatedWebhook' },
)

export const WebhookListSchema = Type.Object(
  { items: Type.Array(ref(WebhookSchema), { description: `The site's webhooks (at most ${WEBHOOKS_PER_SITE}), oldest first.` }) },
  { $id: 'WebhookList' },
)

export const DeliveryStatusSchema = Type.Enum(DELIVERY_STATUSES, {
  $id: 'DeliveryStatus',
  description: '`pending` (due or waiting for its next attempt), `delivered` (answered 2xx), `failed` (every attempt failed).',
})

export const DeliverySchema = Type.Object(
  {
    deliveryId: Type.String({ description: 'dlv_...' }),
    eventId: Type.String({ description: 'evt_...: the `id` of the body and the `webhook-id` header, the same on every attempt.' }),
    event: ref(WebhookEventTypeSchema),
    status: ref(DeliveryStatusSchema),
    attempts: Type.Integer({ description: 'Attempts made so far.' }),
    lastStatusCode: Nullable(Type.Integer({ description: 'The HTTP status of the last answer; null when none came.' })),
    lastError: Nullable(Type.String({ description: 'Why the last attempt failed.' })),
    lastAttemptAt: Nullable(Timestamp),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'Delivery' },
)

export const DeliveryListSchema = Type.Object(
  { items: Type.Array(ref(DeliverySchema), { description: `The webhook's latest ${WEBHOOK_DELIVERIES_LISTED} deliveries, newest first.` }) },
  { $id: 'DeliveryList' },
)

export type CreateWebhookRequest = Static<typeof CreateWebhookRequestSchema>
export type UpdateWebhookRequest = Static<typeof UpdateWebhookRequestSchema>
export type Webhook = Static<typeof WebhookSchema>
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>
export type Delivery = Static<typeof DeliverySchema>

export const WEBHOOK_SCHEMAS = [
  WebhookEventTypeSchema,
  DeliveryStatusSchema,
  CreateWebhookRequestSchema,
  UpdateWebhookRequestSchema,
  WebhookSchema,
  CreatedWebhookSchema,
  WebhookListSchema,
  DeliverySchema,
  DeliveryListSchema,
]
