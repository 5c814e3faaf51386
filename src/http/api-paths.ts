/**
 * Which unknown paths are the API's, so that their 404 is the JSON error envelope rather than the
 * web site's markdown or page. Three answers:
 * - `api`: the API's own namespace as the router spells it (`/v1`, `/v1/...`, `/mcp/...`,
 *   `/oauth/...`, `/.well-known/...`, `/openapi.json`): always the envelope, whatever the client accepts;
 * - `api-like`: a path an API client or a fuzzer reaches for that only looks like one (`/V1/...`,
 *   `//v1`, `/v1%2f...`, `/api/...`, `/v2`, `/OpenAPI.json/`): the envelope unless the client asks
 *   for HTML or markdown by name;
 * - `site`: anything else, a path of the web site for people.
 */

import type { Config } from '../config.ts'

export type PathKind = 'api' | 'api-like' | 'site'

const API_NAMESPACE = /^\/(?:v1(?:\/|$)|mcp\/|oauth\/|\.well-known\/|openapi\.json$)/

/** First segments that only API clients ask for: versions, `api`, the MCP endpoint, OAuth, API descriptions. */
const API_LIKE_SEGMENT = /^(?:v\d+|api|mcp|oauth|\.well-known|(?:openapi|swagger)(?:\.json|\.ya?ml)?)$/

/** Percent-decoding is repeated this often, so that `%252f` (an encoded `%2f`) is seen as `/` too. */
const DECODE_ROUNDS = 3

/** Decodes every `%XX` to its byte's character, leaving malformed escapes as they are: only ASCII names are compared. */
function decodeBytes(text: string): string {
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    const decoded = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    if (decoded === text) break
    text = decoded
  }
  return text
}

/**
 * The first segment of a path as a lenient server would read it: percent-decoded, backslashes as
 * slashes (as browsers read them), empty, `.` and `..` segments skipped, `;` parameters and
 * surrounding spaces dropped, lowercased.
 */
function firstSegment(path: string): string {
  const segments = decodeBytes(path).replace(/\\/g, '/').split('/')
  for (const raw of segments) {
    const segment = raw.split(';')[0]!.trim().toLowerCase()
    if (segment !== '' && segment !== '.' && segment !== '..') return segment
  }
  return ''
}

/** What kind of path `path` (without its query string) is. */
export function pathKind(path: string): PathKind {
  if (API_NAMESPACE.test(path)) return 'api'
  return API_LIKE_SEGMENT.test(firstSegment(path)) ? 'api-like' : 'site'
}

/**
 * Whether a request's `Host` is the API host of a split setup (`base_url` on a host of its own),
 * where every unknown path is the API's. Always false when the API and the web site share a host.
 */
export function apiHostTest(config: Pick<Config, 'baseUrl' | 'siteUrl'>): (host: string | undefined) => boolean {
  const base = new URL(config.baseUrl)
  if (base.host === new URL(config.siteUrl).host) return () => false
  return (host) => {
    if (!host) return false
    try {
      // Parsed with the API's scheme, so that an explicit default port (`:443`) compares equal.
      return new URL(`${base.protocol}//${host}`).host === base.host
    } catch {
      return false
    }
  }
}
