/**
 * A site's own `_headers` on its answers: what the rules add for a request path (worked out once
 * per path and version, bounded), and Plinth's header lists with those additions (built once per
 * list and additions).
 */
import { type HeaderList, headersFor, NO_HEADERS } from '../publishing/header-rules.ts'
import type { PreparedVersion } from './site-version.ts'

/** Request paths whose `_headers` result is remembered per version, and the longest one remembered. */
export const HEADER_MEMO_LIMIT = 2048
export const HEADER_MEMO_PATH_CHARS = 256

/**
 * How the answers of a password-protected site may be kept: by the visitor's browser only, and
 * checked again each time. A shared cache (a CDN, a proxy) must never keep a page only a visitor
 * who unlocked the site may see, whatever the site's own `_headers` say.
 */
const LOCKED_CACHE_CONTROL = 'private, no-cache'
const LOCKED_HEADERS: HeaderList = [['Cache-Control', LOCKED_CACHE_CONTROL]]

/**
 * What the version's `_headers` adds to answers for this decoded request path (none when it has
 * no `_headers`); on a protected site, with LOCKED_CACHE_CONTROL in place of any Cache-Control.
 */
export function siteHeadersFor(version: PreparedVersion, pathname: string): HeaderList {
  const rules = version.headerRules
  const locked = version.lockedSince !== null
  if (rules === null) return locked ? LOCKED_HEADERS : NO_HEADERS
  const memo = version.headerMemo
  let found = memo.get(pathname)
  if (found === undefined) {
    found = headersFor(rules, pathname)
    if (locked) found = [...found.filter(([name]) => name.toLowerCase() !== 'cache-control'), ...LOCKED_HEADERS]
    // Longer paths are worked out each time: a flood of long random paths costs no memory.
    if (pathname.length > HEADER_MEMO_PATH_CHARS) return found
    if (memo.size >= HEADER_MEMO_LIMIT) memo.clear()
    memo.set(pathname, found)
  }
  return found
}

/** Headers Plinth sets that a `_headers` value replaces rather than joins (the rest are added). */
const REPLACEABLE = new Set(['cache-control', 'referrer-policy', 'x-robots-tag'])

const merged = new WeakMap<readonly string[], WeakMap<HeaderList, string[]>>()

/**
 * A header list with the site's own `_headers` values: Cache-Control, Referrer-Policy and
 * X-Robots-Tag replace Plinth's (a preview keeps its noindex), anything else is added; a site's
 * Content-Security-Policy is so sent as a second policy, which browsers enforce beside Plinth's.
 * Only headers that cannot weaken the site's protection get this far (header-rules.ts refuses the
 * others at publish). Remembered per (list, additions), both of which are built once and reused.
 */
export function withSiteHeaders(base: string[], extra: HeaderList, preview: boolean): string[] {
  if (extra.length === 0) return base
  let byExtra = merged.get(base)
  if (byExtra === undefined) merged.set(base, (byExtra = new WeakMap()))
  const hit = byExtra.get(extra)
  if (hit !== undefined) return hit
  const out = mergeSiteHeaders(base, extra, preview)
  byExtra.set(extra, out)
  return out
}

/** withSiteHeaders for a list built for one answer (a range), which nothing would look up again. */
export function mergeSiteHeaders(base: string[], extra: HeaderList, preview: boolean): string[] {
  if (extra.length === 0) return base
  const out = base.slice()
  for (const [name, value] of extra) {
    const lower = name.toLowerCase()
    if (REPLACEABLE.has(lower)) {
      if (lower === 'x-robots-tag' && preview) continue
      const at = indexOfHeader(out, lower)
      if (at !== -1) {
        out[at + 1] = value
        continue
      }
    }
    out.push(name, value)
  }
  return out
}

function indexOfHeader(list: string[], lower: string): number {
  for (let i = 0; i < list.length; i += 2) if (list[i]!.toLowerCase() === lower) return i
  return -1
}
