/** Table types of site traffic for Kysely (db/types.ts puts them in the Database); migration 0021 says what each holds. */

/** The random salt of one UTC day's visitor hashes. */
export interface TrafficSaltsTable {
  /** `YYYY-MM-DD` */
  day: string
  /** 32 random bytes, base64. */
  salt: string
}

/** A site's counts in one UTC hour. */
export interface TrafficHoursTable {
  website_id: string
  /** `YYYY-MM-DDTHH` (UTC). */
  hour: string
  /** Every answer, bots' included. */
  requests: number
  /** Answers of 2xx in HTML to people (not bots). */
  page_views: number
  /** Bytes of the bodies sent. */
  bytes: number
  /** Requests whose user agent is a known bot's. */
  bots: number
  /** Answers of 404 to people. */
  not_found: number
  status_2xx: number
  status_3xx: number
  status_4xx: number
  status_5xx: number
}

export type TrafficKeyKind = 'path' | 'referrer' | 'missing'

/** One entry of an hour's top lists: a path, a referring host, or a path answered 404 and the page that linked to it. */
export interface TrafficKeysTable {
  website_id: string
  hour: string
  kind: TrafficKeyKind
  key: string
  /** For `missing`: the page that linked there ('' when none); '' otherwise. */
  referrer: string
  count: number
}

/** A visitor seen in an hour, as the day's salted hash of address and user agent. */
export interface TrafficVisitorsTable {
  website_id: string
  hour: string
  visitor: string
}
