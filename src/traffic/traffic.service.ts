/** Reading a site's traffic: owners and editors, a checked range, the figures of every instance's flushes. */
import type { WebsiteAccess } from '../db/access.ts'
import type { Principal } from '../core/principal.ts'
import { hourKey } from './traffic-flush.ts'
import { HOUR_MS, TRAFFIC_TOP_MAX, trafficRange } from './traffic-range.ts'
import type { TrafficRepository } from './traffic.repository.ts'
import type { SiteTrafficReport, TrafficQueryInput } from './traffic.schemas.ts'

/** Rows of 404s (path and referring page) read to make the top list of paths with their referrers. */
const MISSING_ROWS_READ = 500
/** Referring pages listed per path answered 404. */
const REFERRERS_PER_MISSING_PATH = 5

export interface TrafficServiceOptions {
  access: WebsiteAccess
  repo: TrafficRepository
  now: () => number
}

export class TrafficService {
  constructor(private readonly options: TrafficServiceOptions) {}

  /** A site's traffic over a range, as the flushes so far stored it. */
  async siteTraffic(principal: Principal, websiteId: string, query: TrafficQueryInput): Promise<SiteTrafficReport> {
    const { access, repo, now } = this.options
    await access.requireSite(principal, websiteId, 'see')
    const range = trafficRange(query, now())
    const hours = { websiteId, from: hourKey(range.from / HOUR_MS), to: hourKey(range.to / HOUR_MS) }
    const byHour = range.granularity === 'hour'
    const [rows, visitorsByPeriod, dailyVisitors, paths, referrers, missing] = await Promise.all([
      repo.hours(hours),
      byHour ? repo.visitors(hours, 13) : Promise.resolve(null),
      repo.visitors(hours, 10),
      repo.topKeys(hours, 'path', TRAFFIC_TOP_MAX),
      repo.topKeys(hours, 'referrer', TRAFFIC_TOP_MAX),
      repo.topKeys(hours, 'missing', MISSING_ROWS_READ),
    ])
    const periodVisitors = visitorsByPeriod ?? dailyVisitors
    const cut = byHour ? 13 : 10
    const series = new Map<string, SiteTrafficReport['series'][number]>()
    for (let t = range.from; t < range.to; t += range.step) {
      const start = new Date(t).toISOString()
      series.set(start.slice(0, cut), { start, requests: 0, pageViews: 0, visitors: periodVisitors.get(start.slice(0, cut)) ?? 0, bytes: 0 })
    }
    const totals = { requests: 0, pageViews: 0, visitors: 0, bytes: 0, notFound: 0, bots: 0 }
    for (const row of rows) {
      totals.requests += row.requests
      totals.pageViews += row.page_views
      totals.bytes += Number(row.bytes)
      totals.notFound += row.not_found
      totals.bots += row.bots
      const point = series.get(row.hour.slice(0, cut))
      if (point === undefined) continue
      point.requests += row.requests
      point.pageViews += row.page_views
      point.bytes += Number(row.bytes)
    }
    for (const n of dailyVisitors.values()) totals.visitors += n
    return {
      from: new Date(range.from).toISOString(),
      to: new Date(range.to).toISOString(),
      granularity: range.granularity,
      totals,
      series: [...series.values()],
      topPaths: paths.map((row) => ({ path: row.key, pageViews: Number(row.count) })),
      topReferrers: referrers.map((row) => ({ host: row.key, pageViews: Number(row.count) })),
      notFoundPaths: missingPaths(missing),
    }
  }
}

/** Paths answered 404, most first, each with the pages that linked there. */
function missingPaths(rows: readonly { key: string; referrer: string; count: number }[]): SiteTrafficReport['notFoundPaths'] {
  const byPath = new Map<string, SiteTrafficReport['notFoundPaths'][number]>()
  for (const row of rows) {
    let entry = byPath.get(row.key)
    if (entry === undefined) byPath.set(row.key, (entry = { path: row.key, count: 0, referrers: [] }))
    const n = Number(row.count)
    entry.count += n
    if (row.referrer !== '') entry.referrers.push({ url: row.referrer, count: n })
  }
  const entries = [...byPath.values()].sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1)).slice(0, TRAFFIC_TOP_MAX)
  for (const entry of entries) entry.referrers = entry.referrers.sort((a, b) => b.count - a.count).slice(0, REFERRERS_PER_MISSING_PATH)
  return entries
}
