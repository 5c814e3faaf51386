/** screenshot_page: the same service call and schemas as the screenshot route, answered with the PNG as image content and the report as structured content. */
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs, WithImages } from '../mcp/tool-definition.ts'
import { FileSetRefParam, WebsiteIdParam } from '../websites/websites.schemas.ts'
import { BrowserReportSchema, PageFields } from './browser.schemas.ts'
import type { PageViews } from './page-views.ts'

export function browserTools(pageViews: PageViews): AnyMcpTool[] {
  return [
    defineTool({
      name: 'screenshot_page',
      toolset: 'publishing',
      title: "See a version's page in a real browser",
      description:
        'Load a page of a version (id or number) or of a draft (draftId as versionId) in Chromium and see it: answers the screenshot as an image and a report: status, title, loadMs, consoleErrors, failedRequests (every request to another origin is refused: pages load with no network but their own site), policyViolations (what the Content-Security-Policy refused) and horizontalOverflow (at viewport mobile: a layout too wide for a phone). Use it after publishing, on a preview before promote_version, or on a draft. BROWSER_UNAVAILABLE when the instance has no browser; BROWSER_BUSY: retry after retryAfter seconds.',
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: FileSetRefParam, ...PageFields }),
      output: BrowserReportSchema,
      hints: READ_ONLY,
      run: async (principal, { websiteId, versionId, ...query }) => {
        const { png, report } = await pageViews.screenshot(principal, websiteId, versionId, query)
        return new WithImages(report, [{ data: png, mimeType: 'image/png' }])
      },
    }),
  ]
}
