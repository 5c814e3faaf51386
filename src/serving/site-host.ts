/**
 * Host header parsing for site requests: `{slug}.{siteDomain}` is the live site,
 * `{slug}--v{n}.{siteDomain}` the preview of version n and `{slug}--d{token}.{siteDomain}` the
 * preview of a draft. Ports are ignored on both sides. Verified custom domains serve their site's
 * live version; SiteHosts remembers each Host value's answer.
 */
import { MAX_HOST_CHARS } from '../core/limits.ts'
import { type DraftLabel, draftLabel, parseDraftLabel, parseSiteLabel, type SiteLabel, siteLabel } from '../core/site-address.ts'
import type { CustomHosts } from './custom-hosts.ts'

/** A site host: the live site (version null), the preview of one version, or a draft's preview (draftId). */
export type SiteHost = SiteLabel | DraftLabel

/** The host label a site host's versions are cached under: `slug`, `slug--v{n}` or `slug--d{token}`. */
function hostLabel(site: SiteHost): string {
  return 'draftId' in site ? draftLabel(site.slug, site.draftId) : siteLabel(site.slug, site.version)
}

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
 * valid label left of the domain. Never throws. (SiteHosts remembers it per Host value.)
 */
export function parseSiteHost(host: string | undefined, siteDomain: string): SiteHost | null {
  if (typeof host !== 'string' || typeof siteDomain !== 'string') return null
  const parsed = parseUncached(host, siteDomain)
  return parsed === null ? null : Object.freeze(parsed)
}

function parseUncached(host: string, siteDomain: string): SiteHost | null {
  if (host.length === 0 || host.length > MAX_HOST_CHARS) return null
  const name = hostName(host)
  const domain = hostName(siteDomain)
  if (name === null || domain === null) return null
  if (name.length <= domain.length + 1 || !name.endsWith(domain)) return null
  if (name.charCodeAt(name.length - domain.length - 1) !== 46 /* . */) return null
  const label = name.slice(0, name.length - domain.length - 1)
  if (label.includes('.')) return null
  return parseSiteLabel(label) ?? parseDraftLabel(label)
}

/** A Host value that names a site: the label its versions are cached under, and the site. */
export interface HostEntry {
  label: string
  site: SiteHost
}

/** Host values remembered at most; the memo starts over when it is full. */
export const HOST_MEMO_LIMIT = 4096

/** What a Host value under the site domain names when it names no site (`a.b.{site_domain}`, `{slug}--v0.{site_domain}`). */
export const NO_SITE = Symbol('no site')

/** What a Host value names: a site, no site though it is under the site domain, or neither (null: the service's own hosts, any other). */
export type SiteAddress = HostEntry | typeof NO_SITE | null

/**
 * Which site a Host value names, if any, parsed once per distinct value: a site, no site though
 * it is under the site domain, or neither (the service's own hosts, any other). Every request asks
 * (server.ts sends site hosts to the site server), so the memo is bounded: at most
 * HOST_MEMO_LIMIT values, none longer than MAX_HOST_CHARS.
 */
export class SiteHosts {
  private readonly memo = new Map<string, SiteAddress>()
  private readonly serviceHosts: ReadonlySet<string>
  /** `.{site_domain}` without its port: what a host under the site domain ends with. */
  private readonly domainSuffix: string | null

  constructor(
    private readonly siteDomain: string,
    serviceHosts: Iterable<string>,
    private readonly customHosts: CustomHosts | null,
  ) {
    this.serviceHosts = new Set([...serviceHosts].map((h) => h.toLowerCase()))
    const domain = hostName(siteDomain)
    this.domainSuffix = domain === null ? null : `.${domain}`
    // A custom domain verified or removed: the answers remembered before are stale.
    if (customHosts !== null) customHosts.onChange = () => this.memo.clear()
  }

  /** Host values remembered now. */
  get size(): number {
    return this.memo.size
  }

  /** The site a Host value names; null when it names none. */
  entry(host: string | undefined): HostEntry | null {
    const found = this.addressOf(host)
    return found === NO_SITE ? null : found
  }

  /**
   * What a Host value names. An address under the site domain that names no site (nor is one of
   * the service's own hosts) is NO_SITE: it is answered as a site that is not there, never by the
   * API or the web site.
   */
  addressOf(host: string | undefined): SiteAddress {
    // Too long to name a site: not parsed, and not remembered.
    if (host === undefined || host.length > MAX_HOST_CHARS) return null
    const hit = this.memo.get(host)
    if (hit !== undefined) return hit
    const found = this.parse(host)
    if (this.memo.size >= HOST_MEMO_LIMIT) this.memo.clear()
    this.memo.set(host, found)
    return found
  }

  private parse(host: string): SiteAddress {
    const name = hostName(host)
    if (name !== null && this.serviceHosts.has(name)) return null
    const site = parseSiteHost(host, this.siteDomain)
    if (site !== null) return { label: hostLabel(site), site }
    // A verified custom domain serves its site's live version, as `{slug}.{site_domain}` does.
    const custom = name === null ? undefined : this.customHosts?.slugOf(name)
    if (custom !== undefined) return { label: custom, site: { slug: custom, version: null } }
    return name !== null && this.domainSuffix !== null && name.endsWith(this.domainSuffix) ? NO_SITE : null
  }
}
