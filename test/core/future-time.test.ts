/** Times of the future a caller sets (a scheduled promotion, an expiry): read exactly as written, or refused naming the field. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AppError } from '../../src/core/errors.ts'
import { futureTime } from '../../src/core/future-time.ts'

const NOW = new Date('2026-11-29T12:00:00Z')

const refusal = (text: string): AppError => {
  try {
    futureTime(text, NOW, 'promoteAt')
  } catch (error) {
    assert.ok(error instanceof AppError)
    return error
  }
  assert.fail(`${text} was taken`)
}

test('a time with a zone is read as written, to the millisecond', () => {
  assert.equal(futureTime('2027-02-28T23:59:59.999Z', NOW, 'promoteAt').toISOString(), '2027-02-28T23:59:59.999Z')
  assert.equal(futureTime('2026-12-01T09:00+02:00', NOW, 'promoteAt').toISOString(), '2026-12-01T07:00:00.000Z')
  assert.equal(futureTime('2028-02-29T00:00:00Z', new Date('2027-06-01T00:00:00Z'), 'promoteAt').toISOString(), '2028-02-29T00:00:00.000Z')
})

test('a date or time the calendar does not have is refused, never moved to another day', () => {
  for (const text of [
    '2027-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2027-04-31T00:00:00Z',
    '2027-13-01T00:00:00Z',
    '2027-00-10T00:00:00Z',
    '2027-01-00T00:00:00Z',
    '2027-01-01T24:00:00Z',
    '2027-01-01T10:60:00Z',
    '2027-01-01T10:00:60Z',
    '2027-01-01T10:00:00+24:00',
  ]) {
    const error = refusal(text)
    assert.equal(error.code, 'BAD_REQUEST', text)
    assert.match(error.fields?.promoteAt ?? '', /is not an ISO-8601 date and time/, text)
  }
})

test('a past, far or zoneless time is refused, naming why', () => {
  assert.match(refusal('2026-11-29T11:59:59Z').fields?.promoteAt ?? '', /is not in the future/)
  assert.match(refusal('2028-01-01T00:00:00Z').fields?.promoteAt ?? '', /more than a year ahead/)
  assert.match(refusal('2026-12-01T09:00:00').fields?.promoteAt ?? '', /with a time zone/)
})
