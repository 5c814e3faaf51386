import { AppError } from './errors.ts'

/** The furthest ahead a time may be set: a scheduled promotion, a preview's or a draft's expiry. */
export const FUTURE_HORIZON_MS = 366 * 24 * 60 * 60 * 1000
/** An ISO-8601 date and time with a time zone (Z or ±hh:mm). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i

/**
 * Whether the text is a date and time of the calendar: JavaScript's Date reads 2027-02-30 as
 * March 2nd, where a caller who wrote it made a mistake.
 */
function isCalendarTime(text: string): boolean {
  const parts = DATE_TIME.exec(text)
  if (parts === null) return false
  const field = (group: number) => Number(parts[group] ?? 0)
  const [month, day] = [field(2), field(3)]
  const daysInMonth = new Date(Date.UTC(field(1), month, 0)).getUTCDate()
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && field(4) <= 23 && field(5) <= 59 && field(6) <= 59 && field(7) <= 23 && field(8) <= 59
}

/** A time of the future given as text, within a year of `now`: BAD_REQUEST naming `field` otherwise. */
export function futureTime(text: string, now: Date, field: string): Date {
  const at = isCalendarTime(text) ? new Date(text) : new Date(NaN)
  const refuse = (why: string) => new AppError('BAD_REQUEST', `${field} ${why}.`, { fields: { [field]: why } })
  if (Number.isNaN(at.getTime())) throw refuse('is not an ISO-8601 date and time with a time zone, such as 2026-12-01T09:00:00Z')
  if (at.getTime() <= now.getTime()) throw refuse(`is not in the future (it is ${now.toISOString()} now)`)
  if (at.getTime() - now.getTime() > FUTURE_HORIZON_MS) throw refuse('is more than a year ahead')
  return at
}

/** An expiry a caller sets (`expiresAt`), as stored: null for none (null or left out), else the checked time's ISO text. */
export function storedExpiry(expiresAt: string | null | undefined, now: Date): string | null {
  return expiresAt === undefined || expiresAt === null ? null : futureTime(expiresAt, now, 'expiresAt').toISOString()
}
