/** screenshot_page: the same service call and schemas as the screenshot route, answered with the PNG as image content and the report as structured content. */
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs, WithImages } from '../mcp/tool-definition.ts'
import { FileSetRefArg, WebsiteIdParam } from '../websites/websites.schemas.ts'
import { BrowserReportSchema, PageFields } from './browser.schemas.ts'
import type { PageViews } from './page-views.ts'

export function browserTools(pageViews: PageViews): AnyMcpTool[] {
  return [
    defineTool({
      name: 'screenshot_page',
      toolset: 'browser',
      title: "See a version's page in a real browser",
      description:
        "Load a page of a version (id or number) or a draft (its id as versionId) in Chromium, with no network but the site itself, and see it: the screenshot as an image, and the browser's report (console errors, refused requests, policy violations, sideways overflow on mobile). Use it after publishing, before promote_version, or on a draft. BROWSER_UNAVAILABLE: no browser here; BROWSER_BUSY: retry later.",
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: FileSetRefArg, ...PageFields }),
      output: BrowserReportSchema,
      hints: READ_ONLY,
      run: async (principal, { websiteId, versionId, ...query }) => {
        const { png, report } = await pageViews.screenshot(principal, websiteId, versionId, query)
        return new WithImages(report, [{ data: png, mimeType: 'image/png' }])
      },
    }),
  ]
}
