/**
 * A site's traffic on the dashboard, for its owners and editors: the last 7 and 30 days as charts
 * drawn on the server (traffic-charts.ts) with the same figures as tables, the totals, the top
 * paths and referring hosts, and the paths answered 404 with the pages that linked there.
 */
import type { FastifyInstance } from 'fastify'
import type { TrafficService } from '../traffic/traffic.service.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { accountOf, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { trafficChart } from './traffic-charts.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface TrafficPageServices {
  traffic: TrafficService
  websites: WebsiteQueries
}

const DAY_MS = 86_400_000

export function trafficPageRoutes(web: WebContext, { traffic, websites }: TrafficPageServices) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Params: { websiteId: string } }>('/dashboard/sites/:websiteId/traffic', { schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(accountOf(request))
      const { websiteId } = request.params
      const site = await websites.get(principal, websiteId)
      const today = new Date().toISOString().slice(0, 10)
      const daysBack = (n: number) => new Date(Date.parse(today) - (n - 1) * DAY_MS).toISOString().slice(0, 10)
      const [week, month] = await Promise.all([
        traffic.siteTraffic(principal, websiteId, { from: daysBack(7), to: today, granularity: 'day' }),
        traffic.siteTraffic(principal, websiteId, { from: daysBack(30), to: today, granularity: 'day' }),
      ])
      return sendPage(reply, pageContext(web, request, reply), 'traffic', {
        title: `Traffic · ${site.name} · Plinth`,
        site: { id: site.id, name: site.name },
        periods: [
          { id: 'week', heading: 'Last 7 days', totals: week.totals, chart: trafficChart('week', 'Page views and visitors, last 7 days', week) },
          { id: 'month', heading: 'Last 30 days', totals: month.totals, chart: trafficChart('month', 'Page views and visitors, last 30 days', month) },
        ],
        topPaths: month.topPaths,
        topReferrers: month.topReferrers,
        notFoundPaths: month.notFoundPaths,
      })
    })
  }
}
