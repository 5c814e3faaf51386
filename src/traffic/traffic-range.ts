/** The range a traffic query asks for: checked, rounded to whole hours or days (UTC), bounded. */
import type { Granularity } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** Longest range by day, and by hour, in days. */
export const TRAFFIC_DAY_RANGE_MAX = 400
export const TRAFFIC_HOUR_RANGE_MAX = 31
/** Entries of each top list. */
export const TRAFFIC_TOP_MAX = 20
/** Days of the default range, ending today. */
export const TRAFFIC_DEFAULT_DAYS = 7

export interface TrafficRange {
  granularity: Granularity
  /** Start of the first hour or day (ms). */
  from: number
  /** End of the last hour or day, excluded (ms). */
  to: number
  /** An hour or a day (ms). */
  step: number
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** A date or date-time as ms, or null when it is neither (or no such day, as 2026-02-30). */
function instantOf(text: string): number | null {
  if (DATE_ONLY.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`)
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? null : ms
  }
  if (!DATE_TIME.test(text)) return null
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? null : ms
}

const bad = (field: string, problem: string): AppError =>
  new AppError('BAD_REQUEST', `Invalid traffic query: ${field} ${problem}.`, { fields: { [field]: problem } })

/**
 * The range of a query, as of `now` (by default the TRAFFIC_DEFAULT_DAYS ending now, by day);
 * BAD_REQUEST naming the field for a date it cannot answer. The granularity is the schema's to check.
 */
export function trafficRange(query: { from?: string; to?: string; granularity?: Granularity }, now: number): TrafficRange {
  const granularity = query.granularity ?? 'day'
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS
  let toInstant = now
  if (query.to !== undefined) {
    const parsed = instantOf(query.to)
    if (parsed === null) throw bad('to', 'must be an ISO date (YYYY-MM-DD) or date-time')
    // A date alone is its whole day.
    toInstant = DATE_ONLY.test(query.to) ? parsed + DAY_MS - 1 : parsed
  }
  const to = Math.floor(toInstant / step) * step + step
  let from: number
  if (query.from !== undefined) {
    const parsed = instantOf(query.from)
    if (parsed === null) throw bad('from', 'must be an ISO date (YYYY-MM-DD) or date-time')
    from = Math.floor(parsed / step) * step
  } else from = to - TRAFFIC_DEFAULT_DAYS * DAY_MS
  if (from >= to) throw bad('from', 'must not be after to')
  const maxDays = granularity === 'hour' ? TRAFFIC_HOUR_RANGE_MAX : TRAFFIC_DAY_RANGE_MAX
  if (to - from > maxDays * DAY_MS) throw bad(query.from !== undefined ? 'from' : 'to', `gives a range over ${maxDays} days, the most by ${granularity}`)
  return { granularity, from, to, step }
}
