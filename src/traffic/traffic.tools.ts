/** A site's traffic as an MCP tool (the `traffic` toolset): the same service call and schemas as traffic.routes.ts. */
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs } from '../mcp/tool-definition.ts'
import { WebsiteIdParam } from '../websites/websites.schemas.ts'
import { SiteTrafficSchema, TRAFFIC_RANGE_HELP, TrafficQuery } from './traffic.schemas.ts'
import type { TrafficService } from './traffic.service.ts'

export function trafficTools(traffic: TrafficService): AnyMcpTool[] {
  return [
    defineTool({
      name: 'get_site_traffic',
      toolset: 'traffic',
      title: "Read a site's traffic",
      description: `How the live site is visited, counted by the server (no cookie, no script): totals (requests, pageViews, visitors, bytes, notFound, bots), a series by hour or day (granularity, default day; from and to are ISO dates or date-times, default the last 7 days), the top paths, the referring hosts, and the paths answered 404 with the pages that linked there (fix those links or add redirects). ${TRAFFIC_RANGE_HELP} Owners and editors.`,
      input: toolArgs({ websiteId: WebsiteIdParam, ...TrafficQuery.properties }),
      output: ref(SiteTrafficSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, ...query }) => traffic.siteTraffic(principal, websiteId, query),
    }),
  ]
}
