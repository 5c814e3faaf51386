/**
 * Host header parsing for site requests: `{slug}.{siteDomain}` is the live site and
 * `{slug}--v{n}.{siteDomain}` the preview of version n. Ports are ignored on both sides.
 */
import { parseSiteLabel, type SiteLabel } from '../core/site-address.ts'

/** A site host: the live site (version null) or the preview of one version. */
export type SiteHost = SiteLabel

/** The host name of a Host value (lowercased, port and one trailing dot removed); null when malformed. */
export function hostName(host: string): string | null {
  let name = host.trim().toLowerCase()
  if (name.startsWith('[')) {
    // IPv6 literal: never a site host, but return it whole so it simply fails to match.
    const close = name.indexOf(']')
    if (close === -1) return null
    const rest = name.slice(close + 1)
    if (rest !== '' && !/^:\d{0,5}$/.test(rest)) return null
    return name.slice(0, close + 1)
  }
  const colon = name.indexOf(':')
  if (colon !== -1) {
    if (!/^\d{0,5}$/.test(name.slice(colon + 1))) return null
    name = name.slice(0, colon)
  }
  if (name.endsWith('.')) name = name.slice(0, -1)
  return name === '' ? null : name
}

/**
 * Parses a Host header against the site domain. Returns null for anything that is not exactly one
 * valid label left of the domain. Never throws. (The site server memoizes it per Host value.)
 */
export function parseSiteHost(host: string | undefined, siteDomain: string): SiteHost | null {
  if (typeof host !== 'string' || typeof siteDomain !== 'string') return null
  const parsed = parseUncached(host, siteDomain)
  return parsed === null ? null : Object.freeze(parsed)
}

function parseUncached(host: string, siteDomain: string): SiteHost | null {
  if (host.length === 0 || host.length > 320) return null
  const name = hostName(host)
  const domain = hostName(siteDomain)
  if (name === null || domain === null) return null
  if (name.length <= domain.length + 1 || !name.endsWith(domain)) return null
  if (name.charCodeAt(name.length - domain.length - 1) !== 46 /* . */) return null
  const label = name.slice(0, name.length - domain.length - 1)
  if (label.includes('.')) return null
  return parseSiteLabel(label)
}
