/**
 * The bar charts of a site's traffic page, drawn on the server as SVG (the view writes the
 * elements, escaped): page views per day with each day's visitors beside them, a title and a
 * description that say what the chart shows, and the rows of the table that gives the same
 * figures as text, so that the chart needs no script and no eyes.
 */
import type { SiteTrafficReport } from '../traffic/traffic.schemas.ts'

export const CHART_WIDTH = 720
export const CHART_HEIGHT = 180
/** Room under the bars for the date labels. */
const AXIS = 24
const TOP = 16

export interface ChartBar {
  x: number
  width: number
  /** The page-view bar. */
  viewsY: number
  viewsHeight: number
  /** The visitor bar, narrower, in front of it. */
  visitorsX: number
  visitorsWidth: number
  visitorsY: number
  visitorsHeight: number
  /** Shown on hover and read by screen readers that enter the chart. */
  label: string
  /** The date under the bar, only on some bars so that they do not overlap. */
  tick: string | null
  tickX: number
}

export interface TrafficChart {
  id: string
  title: string
  description: string
  width: number
  height: number
  baseline: number
  max: number
  bars: ChartBar[]
  rows: Array<{ day: string; pageViews: number; visitors: number; requests: number; bytes: number }>
}

const dayOf = (start: string): string => start.slice(0, 10)

/** The chart of a report by day; `id` makes its element ids unique on the page. */
export function trafficChart(id: string, heading: string, report: SiteTrafficReport): TrafficChart {
  const points = report.series
  const max = Math.max(1, ...points.map((p) => Math.max(p.pageViews, p.visitors)))
  const plot = CHART_HEIGHT - AXIS - TOP
  const slot = CHART_WIDTH / Math.max(1, points.length)
  const width = Math.max(2, slot * 0.7)
  const every = Math.ceil(points.length / 8)
  const scale = (n: number) => Math.round((n / max) * plot * 10) / 10
  const bars = points.map((p, i) => {
    const x = Math.round((i * slot + (slot - width) / 2) * 10) / 10
    const viewsHeight = scale(p.pageViews)
    const visitorsHeight = scale(p.visitors)
    const visitorsWidth = Math.round(width * 0.5 * 10) / 10
    return {
      x,
      width: Math.round(width * 10) / 10,
      viewsY: TOP + plot - viewsHeight,
      viewsHeight,
      visitorsX: Math.round((x + (width - visitorsWidth) / 2) * 10) / 10,
      visitorsWidth,
      visitorsY: TOP + plot - visitorsHeight,
      visitorsHeight,
      label: `${dayOf(p.start)}: ${p.pageViews} page ${p.pageViews === 1 ? 'view' : 'views'}, ${p.visitors} ${p.visitors === 1 ? 'visitor' : 'visitors'}`,
      tick: (points.length - 1 - i) % every === 0 ? dayOf(p.start).slice(5) : null,
      tickX: Math.round((i * slot + slot / 2) * 10) / 10,
    }
  })
  const busiest = points.reduce<(typeof points)[number] | null>((best, p) => (best === null || p.pageViews > best.pageViews ? p : best), null)
  const first = points[0]
  const last = points.at(-1)
  const description =
    first && last
      ? `Bar chart of page views and visitors per day from ${dayOf(first.start)} to ${dayOf(last.start)}: ${report.totals.pageViews} page views and ${report.totals.visitors} visitors in all` +
        (busiest && busiest.pageViews > 0 ? `; the busiest day was ${dayOf(busiest.start)}, with ${busiest.pageViews} page views.` : '; no page view yet.')
      : 'No data.'
  return {
    id,
    title: heading,
    description,
    width: CHART_WIDTH,
    height: CHART_HEIGHT,
    baseline: CHART_HEIGHT - AXIS,
    max,
    bars,
    rows: points.map((p) => ({ day: dayOf(p.start), pageViews: p.pageViews, visitors: p.visitors, requests: p.requests, bytes: p.bytes })),
  }
}
