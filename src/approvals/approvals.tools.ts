/**
 * Promotion requests and scheduled promotions as MCP tools (the `approvals` toolset): the same
 * service calls and schemas as approvals.routes.ts and promoteWebsiteVersion with promoteAt.
 */
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs } from '../mcp/tool-definition.ts'
import { VersionRefArg, WebsiteIdParam } from '../websites/websites.schemas.ts'
import {
  PromoteAtParam,
  PromotionRequestInputSchema,
  PromotionRequestSchema,
  RequestIdParam,
  ScheduleIdParam,
  ScheduleListSchema,
  ScheduleSchema,
} from './approvals.schemas.ts'
import type { PromotionRequests } from './promotion-requests.ts'
import type { PromotionSchedules } from './promotion-schedules.ts'

export function approvalsTools({ promotionRequests, schedules }: { promotionRequests: PromotionRequests; schedules: PromotionSchedules }): AnyMcpTool[] {
  return [
    defineTool({
      name: 'request_promotion',
      toolset: 'approvals',
      title: 'Ask a person to make a version live',
      description:
        "When the user wants a person to approve before a version goes live (or you may publish but not promote): publish with promote false, then call this with the versionId and a note saying what changed. The site's owner and editors see the preview, the diff against the live version and the site check warnings on their dashboard, and approve (it goes live) or decline with a reason. Read the outcome with get_promotion_request; a version that already has a pending request answers that one.",
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: VersionRefArg, ...PromotionRequestInputSchema.properties }),
      output: ref(PromotionRequestSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (principal, { websiteId, versionId, note }) =>
        (await promotionRequests.request(principal, websiteId, versionId, note === undefined ? {} : { note })).request,
    }),
    defineTool({
      name: 'get_promotion_request',
      toolset: 'approvals',
      title: 'Read the outcome of a promotion request',
      description:
        'status pending until a person decides; approved (the version is live now) or declined, with the reason: tell the user, and when declined, change what the reason asks and request again.',
      input: toolArgs({ websiteId: WebsiteIdParam, requestId: RequestIdParam }),
      output: ref(PromotionRequestSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, requestId }) => promotionRequests.get(principal, websiteId, requestId),
    }),
    defineTool({
      name: 'withdraw_promotion_request',
      toolset: 'approvals',
      title: 'Withdraw a promotion request',
      description:
        'When a pending request should no longer be approved (you found a mistake, or the user changed their mind): its status becomes cancelled and the live version stays. Fix the version, then request again.',
      input: toolArgs({ websiteId: WebsiteIdParam, requestId: RequestIdParam }),
      output: ref(PromotionRequestSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (principal, { websiteId, requestId }) => promotionRequests.withdraw(principal, websiteId, requestId),
    }),
    defineTool({
      name: 'schedule_promotion',
      toolset: 'approvals',
      title: 'Make a version live at a set time',
      description:
        'When the user wants a version live at a given time (a launch, a menu from Monday): the version goes live within the minute after promoteAt, on the server, with nobody connected. versionId is its id or number (publish with promote false first). Until then the live version stays; list_schedules shows what is planned and how each ran, cancel_schedule takes one back. A schedule promotes as you: it fails if you may no longer edit the site.',
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: VersionRefArg, promoteAt: PromoteAtParam }),
      output: ref(ScheduleSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: (principal, { websiteId, versionId, promoteAt }) => schedules.schedule(principal, websiteId, versionId, promoteAt),
    }),
    defineTool({
      name: 'list_schedules',
      toolset: 'approvals',
      title: "List a site's scheduled promotions",
      description: 'Latest time first, at most 100: pending ones (still to run), and those done, failed (with the error saying why) or cancelled.',
      input: toolArgs({ websiteId: WebsiteIdParam }),
      output: ref(ScheduleListSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId }) => schedules.list(principal, websiteId),
    }),
    defineTool({
      name: 'cancel_schedule',
      toolset: 'approvals',
      title: 'Cancel a scheduled promotion',
      description:
        'Takes back a pending schedule: its version does not go live then, and the schedule is answered with status cancelled. One that ran, runs or was cancelled already is NOT_PENDING.',
      input: toolArgs({ websiteId: WebsiteIdParam, scheduleId: ScheduleIdParam }),
      output: ref(ScheduleSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (principal, { websiteId, scheduleId }) => schedules.cancel(principal, websiteId, scheduleId),
    }),
  ]
}
