/** Promotion requests as MCP tools (the `approvals` toolset): the same service calls and schemas as approvals.routes.ts. */
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs } from '../mcp/tool-definition.ts'
import { VersionIdParam, WebsiteIdParam } from '../websites/websites.schemas.ts'
import { PromotionRequestInputSchema, PromotionRequestSchema, RequestIdParam } from './approvals.schemas.ts'
import type { PromotionRequests } from './promotion-requests.ts'

export function approvalsTools({ promotionRequests }: { promotionRequests: PromotionRequests }): AnyMcpTool[] {
  return [
    defineTool({
      name: 'request_promotion',
      toolset: 'approvals',
      title: 'Ask a person to make a version live',
      description:
        "When the user wants a person to approve before a version goes live (or you may publish but not promote): publish with promote false, then call this with the versionId and a note saying what changed. The site's owner and editors see the preview, the diff against the live version and the site check warnings on their dashboard, and approve (it goes live) or decline with a reason. Read the outcome with get_promotion_request; a version that already has a pending request answers that one.",
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: VersionIdParam, ...PromotionRequestInputSchema.properties }),
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
  ]
}
