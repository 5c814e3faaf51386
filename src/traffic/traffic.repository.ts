/** Traffic's queries: the day's salts, the additive writes of a flush, the reads of a range, the pruning. */
import { randomBytes } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { TRAFFIC_VISITORS_PER_HOUR } from '../core/limits.ts'
import type { Executor } from '../db/access.ts'
import { inLockOrder } from '../db/lock-order.ts'
import type { Database, TrafficHoursTable, TrafficKeyKind } from '../db/types.ts'

/** Rows written per statement (well under both dialects' limits on bound parameters). */
const CHUNK = 400

/** A site's counts in one UTC hour, as stored. */
export type HourRow = TrafficHoursTable

export interface KeyRow {
  website_id: string
  hour: string
  kind: TrafficKeyKind
  key: string
  referrer: string
  count: number
}

export interface VisitorRow {
  website_id: string
  hour: string
  visitor: string
}

/** A flush's increments, written in one transaction. */
export interface TrafficIncrements {
  hours: HourRow[]
  keys: KeyRow[]
  visitors: VisitorRow[]
}

/** A site and hour as one key: what the visitor cap counts by, and the first part of every row's key. */
const siteHour = (row: { website_id: string; hour: string }): string => `${row.website_id}\n${row.hour}`

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK))
  return out
}

/** A range of hours, `YYYY-MM-DDTHH` from `from` (inclusive) to `to` (exclusive). */
export interface HourRange {
  websiteId: string
  from: string
  to: string
}

export class TrafficRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The salt of a day (`YYYY-MM-DD`): the one stored, or a new random one stored now if none is. */
  async saltOf(day: string): Promise<string> {
    await this.db
      .insertInto('traffic_salts')
      .values({ day, salt: randomBytes(32).toString('base64') })
      .onConflict((oc) => oc.column('day').doNothing())
      .execute()
    const row = await this.db.selectFrom('traffic_salts').select('salt').where('day', '=', day).executeTakeFirstOrThrow()
    return row.salt
  }

  /** Forgets the salts of days before `day`: their hashes can then be linked to nothing. */
  async dropSaltsBefore(day: string): Promise<void> {
    await this.db.deleteFrom('traffic_salts').where('day', '<', day).execute()
  }

  /**
   * Adds a flush's counts to what is stored, all or nothing. Each table's rows go in in their keys'
   * order (db/lock-order.ts): instances flushing the same sites and hours at once never deadlock.
   */
  async add(increments: TrafficIncrements): Promise<void> {
    const hours = inLockOrder(increments.hours, siteHour)
    const keys = inLockOrder(increments.keys, (row) => [siteHour(row), row.kind, row.key, row.referrer].join('\n'))
    const visitors = inLockOrder(increments.visitors, (row) => `${siteHour(row)}\n${row.visitor}`)
    await this.db.transaction().execute(async (trx) => {
      for (const rows of chunks(hours)) await this.addHours(trx, rows)
      for (const rows of chunks(keys)) {
        await trx
          .insertInto('traffic_keys')
          .values(rows)
          .onConflict((oc) =>
            oc
              .columns(['website_id', 'hour', 'kind', 'key', 'referrer'])
              .doUpdateSet((eb) => ({ count: eb('traffic_keys.count', '+', eb.ref('excluded.count')) })),
          )
          .execute()
      }
      for (const rows of chunks(await this.withinVisitorCap(trx, visitors))) {
        await trx
          .insertInto('traffic_visitors')
          .values(rows)
          .onConflict((oc) => oc.columns(['website_id', 'hour', 'visitor']).doNothing())
          .execute()
      }
    })
  }

  /** The visitors that fit under TRAFFIC_VISITORS_PER_HOUR, counted against what each site and hour holds already. */
  private async withinVisitorCap(trx: Executor, visitors: VisitorRow[]): Promise<VisitorRow[]> {
    const byHour = new Map<string, VisitorRow[]>()
    for (const row of visitors) {
      const key = siteHour(row)
      const rows = byHour.get(key)
      if (rows === undefined) byHour.set(key, [row])
      else rows.push(row)
    }
    const kept: VisitorRow[] = []
    for (const rows of byHour.values()) {
      const { website_id, hour } = rows[0]!
      const held = await trx
        .selectFrom('traffic_visitors')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('website_id', '=', website_id)
        .where('hour', '=', hour)
        .executeTakeFirstOrThrow()
      kept.push(...rows.slice(0, Math.max(0, TRAFFIC_VISITORS_PER_HOUR - Number(held.n))))
    }
    return kept
  }

  private async addHours(trx: Executor, rows: HourRow[]): Promise<void> {
    await trx
      .insertInto('traffic_hours')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['website_id', 'hour']).doUpdateSet((eb) => ({
          requests: eb('traffic_hours.requests', '+', eb.ref('excluded.requests')),
          page_views: eb('traffic_hours.page_views', '+', eb.ref('excluded.page_views')),
          bytes: eb('traffic_hours.bytes', '+', eb.ref('excluded.bytes')),
          bots: eb('traffic_hours.bots', '+', eb.ref('excluded.bots')),
          not_found: eb('traffic_hours.not_found', '+', eb.ref('excluded.not_found')),
          status_2xx: eb('traffic_hours.status_2xx', '+', eb.ref('excluded.status_2xx')),
          status_3xx: eb('traffic_hours.status_3xx', '+', eb.ref('excluded.status_3xx')),
          status_4xx: eb('traffic_hours.status_4xx', '+', eb.ref('excluded.status_4xx')),
          status_5xx: eb('traffic_hours.status_5xx', '+', eb.ref('excluded.status_5xx')),
        })),
      )
      .execute()
  }

  /** The stored hours of a site in a range. */
  hours({ websiteId, from, to }: HourRange): Promise<HourRow[]> {
    return this.db
      .selectFrom('traffic_hours')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('hour', '>=', from)
      .where('hour', '<', to)
      .orderBy('hour')
      .execute()
  }

  /** Distinct visitors per period of a range: `length` 13 counts per hour, 10 per day (the first characters of `hour`). */
  async visitors({ websiteId, from, to }: HourRange, length: 10 | 13): Promise<Map<string, number>> {
    const period = sql<string>`substr(hour, 1, ${sql.lit(length)})`
    const rows = await this.db
      .selectFrom('traffic_visitors')
      .select([period.as('period'), sql<number>`count(distinct visitor)`.as('visitors')])
      .where('website_id', '=', websiteId)
      .where('hour', '>=', from)
      .where('hour', '<', to)
      .groupBy(period)
      .execute()
    return new Map(rows.map((row) => [row.period, Number(row.visitors)]))
  }

  /** The top `limit` keys of one kind in a range, by count (for `missing`, per path and referring page). */
  topKeys({ websiteId, from, to }: HourRange, kind: TrafficKeyKind, limit: number) {
    return this.db
      .selectFrom('traffic_keys')
      .select(['key', 'referrer', (eb) => eb.fn.sum<number>('count').as('count')])
      .where('website_id', '=', websiteId)
      .where('kind', '=', kind)
      .where('hour', '>=', from)
      .where('hour', '<', to)
      .groupBy(['key', 'referrer'])
      .orderBy('count', 'desc')
      .orderBy('key')
      .orderBy('referrer')
      .limit(limit)
      .execute()
  }

  /** Removes every count of hours before `hour`. */
  async pruneBefore(hour: string): Promise<void> {
    for (const table of ['traffic_hours', 'traffic_keys', 'traffic_visitors'] as const) {
      await this.db.deleteFrom(table).where('hour', '<', hour).execute()
    }
  }
}
