/**
 * A site's webhooks on the dashboard, for its owner: the endpoints with their latest deliveries,
 * and the forms to add one (its secret shown once, on the page that answers the form), pause or
 * resume it, send a delivery again and remove it. Editors get the owner-only page, anyone else 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Account } from '../auth/accounts.service.ts'
import { WEBHOOK_EVENT_TYPES } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { WEBHOOK_DESCRIPTION_MAX_CHARS, WEBHOOK_URL_MAX_CHARS, WEBHOOKS_PER_SITE } from '../core/limits.ts'
import { statusOf } from '../http/error-status.ts'
import type { WebhooksService } from '../webhooks/webhooks.service.ts'
import type { CreateWebhookRequest } from '../webhooks/webhooks.schemas.ts'
import { accountOf, checked, field, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface WebhookPageServices {
  webhooks: WebhooksService
}

/** Deliveries shown per endpoint; the API lists more. */
const DELIVERIES_SHOWN = 10

const NOTICES: Record<string, string> = {
  'webhook-removed': 'The webhook was removed. Its pending deliveries will not be sent.',
  'webhook-paused': 'The webhook is paused: nothing is sent to it until it is resumed.',
  'webhook-resumed': 'The webhook is resumed: its pending deliveries are sent now.',
  redelivered: 'The delivery will be sent again in a moment, as a new delivery with the same webhook-id.',
}

type Params = { Params: { websiteId: string }; Querystring: { done?: string } }

export function webhookRoutes(web: WebContext, services: WebhookPageServices) {
  const { webhooks } = services
  const pagePath = (websiteId: string) => `/dashboard/sites/${encodeURIComponent(websiteId)}/webhooks`

  const webhooksPage = async (request: FastifyRequest<Params>, reply: FastifyReply, account: Account, extra: Record<string, unknown> = {}, status = 200) => {
    const principal = principalOf(account)
    const site = await webhooks.ownedSite(principal, request.params.websiteId)
    const { items } = await webhooks.list(principal, site.id)
    const withDeliveries = await Promise.all(
      items.map(async (w) => ({ ...w, deliveries: (await webhooks.deliveries(principal, site.id, w.webhookId, DELIVERIES_SHOWN)).items })),
    )
    const data = {
      title: `Webhooks · ${site.name} · Plinth`,
      site: { id: site.id, name: site.name },
      webhooks: withDeliveries,
      eventTypes: WEBHOOK_EVENT_TYPES,
      limit: WEBHOOKS_PER_SITE,
      urlMax: WEBHOOK_URL_MAX_CHARS,
      descriptionMax: WEBHOOK_DESCRIPTION_MAX_CHARS,
      deliveriesShown: DELIVERIES_SHOWN,
      notice: request.query.done ? NOTICES[request.query.done] : undefined,
      ...extra,
    }
    return sendPage(reply, pageContext(web, request, reply), 'webhooks', data, { status })
  }

  /** A refusal of the form's input, shown on the page; anything else is the error page's. */
  const refusal = (error: unknown): AppError | null => (error instanceof AppError && error.code === 'VALIDATION_FAILED' ? error : null)

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<Params>('/dashboard/sites/:websiteId/webhooks', { schema: { hide: true } }, async (request, reply) =>
      webhooksPage(request, reply, accountOf(request)),
    )

    app.post<Params>('/dashboard/sites/:websiteId/webhooks', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const typed = { url: field(request, 'url'), events: checked(request, 'events'), description: field(request, 'description') }
      const input = { url: typed.url, events: typed.events, ...(typed.description ? { description: typed.description } : {}) } as CreateWebhookRequest
      try {
        const created = await webhooks.create(principalOf(account), request.params.websiteId, input)
        return await webhooksPage(request, reply, account, { created: { url: created.url, secret: created.secret } }, 201)
      } catch (error) {
        const refused = refusal(error)
        if (!refused) throw error
        const message = Object.entries(refused.fields ?? {})
          .map(([name, problem]) => `The ${name} ${problem}.`)
          .join(' ')
        return webhooksPage(request, reply, account, { addError: { message: message || refused.message, fields: refused.fields }, typed }, statusOf(refused))
      }
    })

    app.post<Params>('/dashboard/sites/:websiteId/webhooks/enabled', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const enabled = field(request, 'enabled') === 'true'
      await webhooks.update(principalOf(account), request.params.websiteId, field(request, 'webhookId'), { enabled })
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=${enabled ? 'webhook-resumed' : 'webhook-paused'}`, 303)
    })

    app.post<Params>('/dashboard/sites/:websiteId/webhooks/redeliver', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await webhooks.redeliver(principalOf(account), request.params.websiteId, field(request, 'webhookId'), field(request, 'deliveryId'))
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=redelivered`, 303)
    })

    app.post<Params>('/dashboard/sites/:websiteId/webhooks/remove', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await webhooks.remove(principalOf(account), request.params.websiteId, field(request, 'webhookId'))
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=webhook-removed`, 303)
    })
  }
}
