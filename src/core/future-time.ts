import { AppError } from './errors.ts'

/** The furthest ahead a time may be set: a scheduled promotion, a preview's or a draft's expiry. */
export const FUTURE_HORIZON_MS = 366 * 24 * 60 * 60 * 1000
/** An ISO-8601 date and time with a time zone (Z or ±hh:mm). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/** A time of the future given as text, within a year of `now`: BAD_REQUEST naming `field` otherwise. */
export function futureTime(text: string, now: Date, field: string): Date {
  const at = DATE_TIME.test(text) ? new Date(text) : new Date(NaN)
  const refuse = (why: string) => new AppError('BAD_REQUEST', `${field} ${why}.`, { fields: { [field]: why } })
  if (Number.isNaN(at.getTime())) throw refuse('is not an ISO-8601 date and time with a time zone, such as 2026-12-01T09:00:00Z')
  if (at.getTime() <= now.getTime()) throw refuse(`is not in the future (it is ${now.toISOString()} now)`)
  if (at.getTime() - now.getTime() > FUTURE_HORIZON_MS) throw refuse('is more than a year ahead')
  return at
}
