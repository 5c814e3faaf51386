/**
 * A site's webhooks, for its owner only: register, list, change and remove endpoints, read each
 * one's delivery log and send a delivery again. Editors get OWNER_ONLY, anyone else NOT_FOUND.
 * Every input is checked before anything is written.
 */
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../core/enums.ts'
import { notFound, validationFailed } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { WEBHOOK_DELIVERIES_LISTED, WEBHOOK_DESCRIPTION_MAX_CHARS, WEBHOOKS_PER_SITE } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import type { WebhookRow } from '../db/types.ts'
import { newSigningSecret, type SecretBox } from './webhook-secrets.ts'
import { webhookUrlProblem } from './webhook-urls.ts'
import type { WebhooksRepository } from './webhooks.repository.ts'
import type { CreatedWebhook, CreateWebhookRequest, Delivery, UpdateWebhookRequest, Webhook } from './webhooks.schemas.ts'

export interface WebhooksServiceOptions {
  access: WebsiteAccess
  repo: WebhooksRepository
  /** Encrypts the signing secrets for storage. */
  box: SecretBox
  /** Hosts that may be reached over http or on a private address (PLINTH_FETCH_ALLOW_HOSTS). */
  allowHosts: readonly string[]
  /** Told that a delivery is due now (a redelivery), so this instance's sender looks at once. */
  nudge: () => void
}

const ACTION = 'manage webhooks'

export class WebhooksService {
  constructor(private readonly options: WebhooksServiceOptions) {}

  /** The site, when the caller owns it. */
  ownedSite(principal: Principal, websiteId: string): Promise<VisibleWebsite> {
    return this.options.access.requireSite(principal, websiteId, 'own', ACTION)
  }

  async list(principal: Principal, websiteId: string): Promise<{ items: Webhook[] }> {
    const site = await this.ownedSite(principal, websiteId)
    return { items: (await this.options.repo.listForSite(site.id)).map(webhookView) }
  }

  async create(principal: Principal, websiteId: string, input: CreateWebhookRequest): Promise<CreatedWebhook> {
    const site = await this.ownedSite(principal, websiteId)
    const checked = this.check(input, true)
    if ((await this.options.repo.countForSite(site.id)) >= WEBHOOKS_PER_SITE) {
      const message = `A site has at most ${WEBHOOKS_PER_SITE} webhooks; remove one to add another.`
      throw validationFailed({ url: message }, message)
    }
    const secret = newSigningSecret()
    const at = nowIso()
    const row: WebhookRow = {
      id: newId('whk'),
      website_id: site.id,
      url: checked.url!,
      events: JSON.stringify(checked.events),
      description: checked.description ?? null,
      secret: this.options.box.seal(secret),
      enabled: 1,
      created_by: principal.userId,
      created_at: at,
      updated_at: at,
      retired_at: null,
    }
    await this.options.repo.insert(row)
    return { ...webhookView(row), secret }
  }

  async update(principal: Principal, websiteId: string, webhookId: string, input: UpdateWebhookRequest): Promise<Webhook> {
    const row = await this.requireWebhook(principal, websiteId, webhookId)
    const checked = this.check(input, false)
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw validationFailed({ enabled: 'must be true or false' })
    const changes = {
      ...(checked.url !== undefined ? { url: checked.url } : {}),
      ...(checked.events !== undefined ? { events: JSON.stringify(checked.events) } : {}),
      ...(input.description !== undefined ? { description: checked.description ?? null } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      updated_at: nowIso(),
    }
    await this.options.repo.update(row.id, changes)
    if (input.enabled === true) this.options.nudge()
    return webhookView({ ...row, ...changes })
  }

  /** Removes a webhook; its pending deliveries are not sent. */
  async remove(principal: Principal, websiteId: string, webhookId: string): Promise<void> {
    const row = await this.requireWebhook(principal, websiteId, webhookId)
    if (!(await this.options.repo.remove(row.id))) throw notFound('Webhook')
  }

  async deliveries(principal: Principal, websiteId: string, webhookId: string, limit = WEBHOOK_DELIVERIES_LISTED): Promise<{ items: Delivery[] }> {
    const row = await this.requireWebhook(principal, websiteId, webhookId)
    return { items: (await this.options.repo.deliveries(row.id, limit)).map(deliveryView) }
  }

  /**
   * Sends a delivery's event to its webhook again, as a new delivery due now with the same event
   * id (`webhook-id`), so a receiver that saw it before can tell. Its own attempts start afresh.
   */
  async redeliver(principal: Principal, websiteId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
    const row = await this.requireWebhook(principal, websiteId, webhookId)
    const earlier = await this.options.repo.delivery(row.id, deliveryId)
    if (!earlier) throw notFound('Delivery')
    const at = nowIso()
    const delivery = {
      id: newId('dlv'),
      webhook_id: row.id,
      event_id: earlier.event_id,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: at,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      claim: null,
      claimed_until: null,
      created_at: at,
      finished_at: null,
    }
    await this.options.repo.insertDeliveries([delivery])
    this.options.nudge()
    return deliveryView({ ...delivery, type: earlier.type })
  }

  private async requireWebhook(principal: Principal, websiteId: string, webhookId: string): Promise<WebhookRow> {
    const site = await this.ownedSite(principal, websiteId)
    const row = await this.options.repo.find(site.id, webhookId)
    if (!row) throw notFound('Webhook')
    return row
  }

  /** Checks every given field (all of url and events when `required`), collecting every problem. */
  private check(input: Partial<CreateWebhookRequest> | UpdateWebhookRequest, required: boolean) {
    const fields: Record<string, string> = {}
    const { url, events, description } = input as Record<string, unknown>
    if (url !== undefined || required) {
      if (typeof url !== 'string' || url.trim() === '') fields.url = 'is required: the https URL deliveries are POSTed to'
      else {
        const problem = webhookUrlProblem(url.trim(), this.options.allowHosts)
        if (problem) fields.url = problem
      }
    }
    if (events !== undefined || required) {
      const known = new Set<string>(WEBHOOK_EVENT_TYPES)
      if (!Array.isArray(events) || events.length === 0) fields.events = `must name at least one event: ${WEBHOOK_EVENT_TYPES.join(', ')}`
      else if (events.some((e) => typeof e !== 'string' || !known.has(e))) {
        const unknown = events.filter((e) => typeof e !== 'string' || !known.has(e)).map((e) => JSON.stringify(e).slice(0, 60))
        fields.events = `names unknown events (${unknown.slice(0, 5).join(', ')}): choose from ${WEBHOOK_EVENT_TYPES.join(', ')}`
      } else if (new Set(events).size !== events.length) fields.events = 'names an event twice'
    }
    if (description !== undefined && description !== null) {
      if (typeof description !== 'string') fields.description = 'must be text'
      else if (description.length > WEBHOOK_DESCRIPTION_MAX_CHARS) fields.description = `must be at most ${WEBHOOK_DESCRIPTION_MAX_CHARS} characters`
    }
    if (Object.keys(fields).length > 0) throw validationFailed(fields)
    const trimmedDescription = typeof description === 'string' ? description.trim() : undefined
    return {
      url: typeof url === 'string' ? url.trim() : undefined,
      events: Array.isArray(events) ? (events as WebhookEventType[]) : undefined,
      description: trimmedDescription === '' ? undefined : trimmedDescription,
    }
  }
}

export function webhookView(row: WebhookRow): Webhook {
  return {
    webhookId: row.id,
    websiteId: row.website_id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEventType[],
    description: row.description,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

type DeliveryWithType = Awaited<ReturnType<WebhooksRepository['deliveries']>>[number]

export function deliveryView(row: DeliveryWithType): Delivery {
  return {
    deliveryId: row.id,
    eventId: row.event_id,
    event: row.type,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  }
}
