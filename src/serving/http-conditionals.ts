/**
 * Request-header evaluation for site responses: Accept-Encoding negotiation (memoized per distinct
 * header value), If-None-Match, If-Range and single byte ranges.
 */
import Negotiator from 'negotiator'

export type ServedEncoding = 'br' | 'gzip' | 'identity'

const OFFERED: readonly ServedEncoding[] = ['br', 'gzip', 'identity']
const IDENTITY_ONLY: readonly ServedEncoding[] = ['identity']
const MEMO_LIMIT = 256

type EncodingsWithPreference = (available: readonly string[], options: { preferred: readonly string[] }) => string[]

/**
 * Acceptable encodings for an Accept-Encoding value, best first (client q-values decide, br before
 * gzip before identity on ties). Results are memoized in a small bounded Map.
 */
export class EncodingNegotiator {
  private readonly memo = new Map<string, readonly ServedEncoding[]>()

  preferred(acceptEncoding: string | undefined): readonly ServedEncoding[] {
    if (acceptEncoding === undefined || acceptEncoding === '') return IDENTITY_ONLY
    const hit = this.memo.get(acceptEncoding)
    if (hit !== undefined) return hit
    const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } })
    const encodings = (negotiator.encodings as unknown as EncodingsWithPreference).call(negotiator, OFFERED, {
      preferred: OFFERED,
    }) as ServedEncoding[]
    const result = Object.freeze(encodings)
    if (this.memo.size >= MEMO_LIMIT) this.memo.delete(this.memo.keys().next().value as string)
    this.memo.set(acceptEncoding, result)
    return result
  }
}

/** If-None-Match evaluation (weak comparison, `*` matches any current representation). */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === etag) return true
  const list = ifNoneMatch.split(',')
  for (const entry of list) {
    let tag = entry.trim()
    if (tag === '*') return true
    if (tag.startsWith('W/')) tag = tag.slice(2)
    if (tag === etag) return true
  }
  return false
}

export interface ByteRange {
  start: number
  /** Inclusive. */
  end: number
}

export const UNSATISFIABLE = 'unsatisfiable'

const SINGLE_RANGE = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i

/**
 * A single byte range against a representation of `size` bytes. Null means ignore the header
 * (malformed or several ranges: send the full representation).
 */
export function parseRange(header: string, size: number): ByteRange | typeof UNSATISFIABLE | null {
  const match = SINGLE_RANGE.exec(header)
  if (match === null) return null
  const [, first, last] = match
  if (first === '' && last === '') return null
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return UNSATISFIABLE
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return null
  if (start >= size) return UNSATISFIABLE
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) }
}
