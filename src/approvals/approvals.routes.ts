import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, BODY_ERRORS, errorResponses, OPTIONAL_BODY, success } from '../http/openapi.ts'
import { VersionIdParam, WebsiteIdParam, WebsiteParams } from '../websites/websites.schemas.ts'
import {
  PreviewExpiryInputSchema,
  PreviewExpirySchema,
  PromotionRequestInputSchema,
  PromotionRequestListQuery,
  PromotionRequestListSchema,
  PromotionRequestSchema,
  RequestIdParam,
  ScheduleIdParam,
  ScheduleListSchema,
} from './approvals.schemas.ts'
import type { PromotionRequests } from './promotion-requests.ts'
import type { PromotionSchedules } from './promotion-schedules.ts'

const tags = ['Approvals']
const VersionParams = Type.Object({ websiteId: WebsiteIdParam, versionId: VersionIdParam })

/** Promotion requests, schedules and preview expiry, under /v1 (authenticated). The scheduled promote is promoteWebsiteVersion's (websites.routes.ts). */
export function approvalsRoutes({
  promotionRequests,
  schedules,
}: {
  promotionRequests: PromotionRequests
  schedules: PromotionSchedules
}): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.post(
      '/websites/:websiteId/versions/:versionId/promotion-request',
      {
        preValidation: OPTIONAL_BODY.preValidation,
        schema: {
          ...OPTIONAL_BODY.schema,
          operationId: 'requestPromotion',
          tags,
          security,
          summary: 'Ask a person to make a version live',
          description:
            "For a caller that publishes but leaves going live to people: the site's owner and editors see the request on the dashboard (and by e-mail when the instance sends mail, and as the webhook event promotion.requested), with the preview, the diff against the live version and the site check warnings, and approve it (the version goes live) or decline it with a reason. Read the outcome with getPromotionRequest. A version that already has a pending request answers that request (200); the live version is 409 ALREADY_LIVE.",
          params: VersionParams,
          body: ref(PromotionRequestInputSchema),
          response: {
            201: success(PromotionRequestSchema, 'The new request, pending.'),
            200: success(PromotionRequestSchema, 'The pending request the version already had.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'ALREADY_LIVE']),
          },
        },
      },
      async (request, reply) => {
        const { params, body } = request
        const { created, request: made } = await promotionRequests.request(principalOf(request), params.websiteId, params.versionId, body)
        return reply.code(created ? 201 : 200).send(made)
      },
    )

    app.get(
      '/websites/:websiteId/promotion-requests',
      {
        schema: {
          operationId: 'listPromotionRequests',
          tags,
          security,
          summary: "List a site's promotion requests",
          description: 'Newest first, at most 100; `status` keeps those of one status.',
          params: WebsiteParams,
          querystring: PromotionRequestListQuery,
          response: { 200: success(PromotionRequestListSchema, 'The requests.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED']) },
        },
      },
      (request) => promotionRequests.list(principalOf(request), request.params.websiteId, request.query.status),
    )

    app.get(
      '/websites/:websiteId/promotion-requests/:requestId',
      {
        schema: {
          operationId: 'getPromotionRequest',
          tags,
          security,
          summary: 'Read a promotion request and its outcome',
          description:
            '`status` is pending until a person decides; then approved (the version went live, decidedAt) or declined (decidedAt and reason); cancelled once withdrawn (decidedAt).',
          params: Type.Object({ websiteId: WebsiteIdParam, requestId: RequestIdParam }),
          response: { 200: success(PromotionRequestSchema, 'The request.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => promotionRequests.get(principalOf(request), request.params.websiteId, request.params.requestId),
    )

    app.delete(
      '/websites/:websiteId/promotion-requests/:requestId',
      {
        schema: {
          operationId: 'withdrawPromotionRequest',
          tags,
          security,
          summary: 'Withdraw a promotion request',
          description:
            'A pending request only (the requester, or anyone who edits the site): its status becomes cancelled, no one can approve it any more, and the live version stays. One decided or withdrawn already is 409 NOT_PENDING.',
          params: Type.Object({ websiteId: WebsiteIdParam, requestId: RequestIdParam }),
          response: { 204: Type.Null({ description: 'Withdrawn.' }), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'NOT_PENDING']) },
        },
      },
      async (request, reply) => {
        await promotionRequests.withdraw(principalOf(request), request.params.websiteId, request.params.requestId)
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/websites/:websiteId/schedules',
      {
        schema: {
          operationId: 'listSchedules',
          tags,
          security,
          summary: "List a site's scheduled promotions",
          description:
            'Latest time first, at most 100: pending ones, and those run, failed or cancelled. Schedule one with promoteWebsiteVersion and promoteAt.',
          params: WebsiteParams,
          response: { 200: success(ScheduleListSchema, 'The schedules.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => schedules.list(principalOf(request), request.params.websiteId),
    )

    app.delete(
      '/websites/:websiteId/schedules/:scheduleId',
      {
        schema: {
          operationId: 'cancelSchedule',
          tags,
          security,
          summary: 'Cancel a scheduled promotion',
          description: 'Only one still pending: one that ran, runs or was cancelled is 409 NOT_PENDING.',
          params: Type.Object({ websiteId: WebsiteIdParam, scheduleId: ScheduleIdParam }),
          response: { 204: Type.Null({ description: 'Cancelled.' }), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'NOT_PENDING']) },
        },
      },
      async (request, reply) => {
        await schedules.cancel(principalOf(request), request.params.websiteId, request.params.scheduleId)
        return reply.code(204).send(null)
      },
    )

    app.patch(
      '/websites/:websiteId/versions/:versionId',
      {
        schema: {
          operationId: 'setPreviewExpiry',
          tags,
          security,
          summary: "Set when a version's preview stops being served",
          description:
            'From expiresAt on, the version is no longer served at its preview URL (404), within a minute; the version itself stays and can still be promoted. null removes the expiry. expiresAt in the past, unparseable or more than a year ahead is 400 BAD_REQUEST; the live version is 409 ALREADY_LIVE.',
          params: VersionParams,
          body: ref(PreviewExpiryInputSchema),
          response: {
            200: success(PreviewExpirySchema, 'The expiry as set.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'BAD_REQUEST', 'NOT_FOUND', 'ALREADY_LIVE']),
          },
        },
      },
      (request) => schedules.setPreviewExpiry(principalOf(request), request.params.websiteId, request.params.versionId, request.body.expiresAt),
    )
  }
}
