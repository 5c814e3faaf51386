import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { WEBHOOKS_PER_SITE } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { WebsiteIdParam, WebsiteParams } from '../websites/websites.schemas.ts'
import type { WebhooksService } from './webhooks.service.ts'
import {
  CreatedWebhookSchema,
  CreateWebhookRequestSchema,
  DeliveryIdParam,
  DeliveryListSchema,
  DeliverySchema,
  UpdateWebhookRequestSchema,
  WebhookIdParam,
  WebhookListSchema,
  WebhookSchema,
} from './webhooks.schemas.ts'

const tags = ['Webhooks']
const WebhookParams = Type.Object({ websiteId: WebsiteIdParam, webhookId: WebhookIdParam })
const DeliveryParams = Type.Object({ websiteId: WebsiteIdParam, webhookId: WebhookIdParam, deliveryId: DeliveryIdParam })
/** Owners only: an editor gets 403 OWNER_ONLY, anyone else 404. */
const OWNER_ERRORS = [...AUTH_ERRORS, 'OWNER_ONLY', 'NOT_FOUND'] as const

/** A site's webhooks, under /v1 (authenticated). */
export function webhooksRoutes(webhooks: WebhooksService): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    const base = '/websites/:websiteId/webhooks'

    app.post(
      base,
      {
        schema: {
          operationId: 'createWebhook',
          tags,
          security,
          summary: 'Register a webhook',
          description: `An endpoint that is POSTed the site's events, each signed per Standard Webhooks with the secret answered here once. At most ${WEBHOOKS_PER_SITE} per site. Owner only.`,
          params: WebsiteParams,
          body: ref(CreateWebhookRequestSchema),
          response: {
            201: success(CreatedWebhookSchema, 'The webhook, with its signing secret: keep it, it is not shown again.'),
            ...errorResponses([...OWNER_ERRORS, ...BODY_ERRORS]),
          },
        },
      },
      async (request, reply) => reply.code(201).send(await webhooks.create(principalOf(request), request.params.websiteId, request.body)),
    )

    app.get(
      base,
      {
        schema: {
          operationId: 'listWebhooks',
          tags,
          security,
          summary: "List a site's webhooks",
          description: 'Without their secrets. Owner only.',
          params: WebsiteParams,
          response: { 200: success(WebhookListSchema, 'The webhooks, oldest first.'), ...errorResponses([...OWNER_ERRORS]) },
        },
      },
      (request) => webhooks.list(principalOf(request), request.params.websiteId),
    )

    app.patch(
      `${base}/:webhookId`,
      {
        schema: {
          operationId: 'updateWebhook',
          tags,
          security,
          summary: 'Change a webhook',
          description: 'Its url, events, description, or whether it is enabled. Pending deliveries go to the new url. Owner only.',
          params: WebhookParams,
          body: ref(UpdateWebhookRequestSchema),
          response: { 200: success(WebhookSchema, 'The webhook as it is now.'), ...errorResponses([...OWNER_ERRORS, ...BODY_ERRORS]) },
        },
      },
      (request) => webhooks.update(principalOf(request), request.params.websiteId, request.params.webhookId, request.body),
    )

    app.delete(
      `${base}/:webhookId`,
      {
        schema: {
          operationId: 'deleteWebhook',
          tags,
          security,
          summary: 'Remove a webhook',
          description: 'Its pending deliveries are not sent, and its delivery log goes with it. Owner only.',
          params: WebhookParams,
          response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses([...OWNER_ERRORS]) },
        },
      },
      async (request, reply) => {
        await webhooks.remove(principalOf(request), request.params.websiteId, request.params.webhookId)
        return reply.code(204).send(null)
      },
    )

    app.get(
      `${base}/:webhookId/deliveries`,
      {
        schema: {
          operationId: 'listWebhookDeliveries',
          tags,
          security,
          summary: "A webhook's delivery log",
          description: 'Each event sent to it: status, attempts, the last answer and when the next attempt is due. Owner only.',
          params: WebhookParams,
          response: { 200: success(DeliveryListSchema, 'The latest deliveries, newest first.'), ...errorResponses([...OWNER_ERRORS]) },
        },
      },
      (request) => webhooks.deliveries(principalOf(request), request.params.websiteId, request.params.webhookId),
    )

    app.post(
      `${base}/:webhookId/deliveries/:deliveryId/redeliver`,
      {
        schema: {
          operationId: 'redeliverWebhookDelivery',
          tags,
          security,
          summary: 'Send a delivery again',
          description: 'Its event, as a new delivery due now, with the same event id (webhook-id) and attempts of its own. Owner only.',
          params: DeliveryParams,
          response: { 202: success(DeliverySchema, 'The new delivery, pending.'), ...errorResponses([...OWNER_ERRORS]) },
        },
      },
      async (request, reply) =>
        reply.code(202).send(await webhooks.redeliver(principalOf(request), request.params.websiteId, request.params.webhookId, request.params.deliveryId)),
    )
  }
}
