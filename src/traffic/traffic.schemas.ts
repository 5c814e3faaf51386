import { type Static, Type } from 'typebox'
import { TRAFFIC_GRANULARITIES } from '../core/enums.ts'
import { ref } from '../core/schemas.ts'
import { TRAFFIC_DAY_RANGE_MAX, TRAFFIC_HOUR_RANGE_MAX, TRAFFIC_TOP_MAX } from './traffic-range.ts'

export const GranularitySchema = Type.Enum(TRAFFIC_GRANULARITIES, { $id: 'TrafficGranularity', description: 'The series by `hour` or by `day` (the default).' })

const count = (description: string) => Type.Integer({ minimum: 0, description })

// The dates are checked by the service, which answers BAD_REQUEST naming the field; the schema only bounds their text.
export const TrafficQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'Start of the range: an ISO date (`2026-11-01`, UTC) or date-time, rounded down to its hour or day. Default: the 7 days ending with `to`.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'End of the range, included: an ISO date (the whole day, UTC) or date-time (its whole hour or day). Default: now.',
      }),
    ),
    granularity: Type.Optional(ref(GranularitySchema)),
  },
  { additionalProperties: false },
)

export const TrafficTotalsSchema = Type.Object(
  {
    requests: count('Every answer of the range, bots’ included.'),
    pageViews: count('Answers of 2xx in HTML to GET requests from people (not bots).'),
    visitors: count('Unique visitors: distinct per day (a daily-salted hash of address and user agent), summed over the days of the range.'),
    bytes: count('Bytes of the bodies sent.'),
    notFound: count('Answers of 404 to people.'),
    bots: count('Requests from known bots and crawlers (by user agent), counted apart from page views and visitors.'),
  },
  { $id: 'TrafficTotals' },
)

export const TrafficPointSchema = Type.Object(
  {
    start: Type.String({ format: 'date-time', description: 'Start of the hour or day (UTC).' }),
    requests: count('Answers.'),
    pageViews: count('Page views.'),
    visitors: count('Unique visitors of that hour or day.'),
    bytes: count('Bytes sent.'),
  },
  { $id: 'TrafficPoint' },
)

export const SiteTrafficSchema = Type.Object(
  {
    from: Type.String({ format: 'date-time', description: 'Start of the first hour or day of the range.' }),
    to: Type.String({ format: 'date-time', description: 'End of the last hour or day of the range (excluded).' }),
    granularity: ref(GranularitySchema),
    totals: ref(TrafficTotalsSchema),
    series: Type.Array(ref(TrafficPointSchema), { description: 'One point per hour or day of the range, zeros included, oldest first.' }),
    topPaths: Type.Array(Type.Object({ path: Type.String(), pageViews: count('Page views.') }), {
      maxItems: TRAFFIC_TOP_MAX,
      description: `The most viewed paths, at most ${TRAFFIC_TOP_MAX}; \`(other)\` gathers the paths past the ones kept per hour.`,
    }),
    topReferrers: Type.Array(Type.Object({ host: Type.String(), pageViews: count('Page views that came from a link on that host.') }), {
      maxItems: TRAFFIC_TOP_MAX,
      description: 'The other sites whose links brought page views (the Referer header’s host; the site’s own host left out).',
    }),
    notFoundPaths: Type.Array(
      Type.Object({
        path: Type.String(),
        count: count('Answers of 404.'),
        referrers: Type.Array(
          Type.Object({ url: Type.String({ description: 'The page that linked there (no query).' }), count: count('Answers of 404 from it.') }),
          {
            description: 'The pages whose links led there, most first; requests without a Referer are not listed.',
          },
        ),
      }),
      { maxItems: TRAFFIC_TOP_MAX, description: 'Paths answered 404 to people, most first, with the links that led there.' },
    ),
  },
  { $id: 'SiteTraffic' },
)

export const TRAFFIC_SCHEMAS = [GranularitySchema, TrafficTotalsSchema, TrafficPointSchema, SiteTrafficSchema]

export type TrafficQueryInput = Static<typeof TrafficQuery>
export type SiteTrafficReport = Static<typeof SiteTrafficSchema>

export const TRAFFIC_RANGE_HELP = `Ranges of at most ${TRAFFIC_DAY_RANGE_MAX} days by day and ${TRAFFIC_HOUR_RANGE_MAX} days by hour.`
