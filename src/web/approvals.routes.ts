/**
 * Promotion requests on the dashboard: a request with what deciding it takes (the preview, the
 * site check warnings, the diff against the live version), and the forms to approve it (the
 * version goes live) or decline it with a reason. Owners and editors decide; anyone else gets 404.
 */
import type { FastifyInstance } from 'fastify'
import { PROMOTION_NOTE_MAX_CHARS } from '../approvals/approvals.schemas.ts'
import type { PromotionRequests } from '../approvals/promotion-requests.ts'
import type { PromotionSchedules } from '../approvals/promotion-schedules.ts'
import { diffLines } from './dashboard.routes.ts'
import { accountOf, field, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface ApprovalPageServices {
  promotionRequests: PromotionRequests
  schedules: PromotionSchedules
}

type Params = { Params: { websiteId: string; requestId: string }; Querystring: { done?: string } }

const NOTICES: Record<string, string> = {
  approved: 'Approved: the version is live now.',
  declined: 'Declined: the live version stays, and the requester can read your reason.',
}

export function approvalRoutes(web: WebContext, { promotionRequests, schedules }: ApprovalPageServices) {
  const pagePath = (websiteId: string, requestId: string) =>
    `/dashboard/sites/${encodeURIComponent(websiteId)}/promotion-requests/${encodeURIComponent(requestId)}`
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<Params>('/dashboard/sites/:websiteId/promotion-requests/:requestId', { schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(accountOf(request))
      const review = await promotionRequests.review(principal, request.params.websiteId, request.params.requestId)
      const changes = review.diff?.files.map((file) => ({ ...file, lines: file.diff === undefined ? null : diffLines(file.diff) })) ?? null
      const data = {
        title: `Request for v${review.request.version} · ${review.site.name} · Plinth`,
        site: review.site,
        request: review.request,
        warnings: review.warnings,
        changes,
        reasonMax: PROMOTION_NOTE_MAX_CHARS,
        notice: request.query.done ? NOTICES[request.query.done] : undefined,
      }
      return sendPage(reply, pageContext(web, request, reply), 'promotion-request', data)
    })

    app.post<Params>('/dashboard/sites/:websiteId/promotion-requests/:requestId/approve', { schema: { hide: true } }, async (request, reply) => {
      const { websiteId, requestId } = request.params
      await promotionRequests.approve(principalOf(accountOf(request)), websiteId, requestId)
      return reply.redirect(`${pagePath(websiteId, requestId)}?done=approved`, 303)
    })

    app.post<{ Params: { websiteId: string; scheduleId: string } }>(
      '/dashboard/sites/:websiteId/schedules/:scheduleId/cancel',
      { schema: { hide: true } },
      async (request, reply) => {
        const { websiteId, scheduleId } = request.params
        await schedules.cancel(principalOf(accountOf(request)), websiteId, scheduleId)
        return reply.redirect(`/dashboard/sites/${encodeURIComponent(websiteId)}?done=schedule-cancelled`, 303)
      },
    )

    app.post<Params>('/dashboard/sites/:websiteId/promotion-requests/:requestId/decline', { schema: { hide: true } }, async (request, reply) => {
      const { websiteId, requestId } = request.params
      const reason = field(request, 'reason').slice(0, PROMOTION_NOTE_MAX_CHARS)
      await promotionRequests.decline(principalOf(accountOf(request)), websiteId, requestId, reason)
      return reply.redirect(`${pagePath(websiteId, requestId)}?done=declined`, 303)
    })
  }
}
