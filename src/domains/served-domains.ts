/**
 * The questions serving and the TLS proxy ask about hosts: which site a custom domain serves, and
 * whether a certificate may be issued for a name. Kept apart from the dashboard's operations so it
 * needs nothing but the repository and can be built before the site server that asks it.
 */
import { parseSiteHost } from '../serving/site-host.ts'
import { type DomainRules, requestedHost } from './domain-names.ts'
import type { DomainsRepository, ServedSite } from './domains.repository.ts'

export class ServedDomains {
  constructor(
    private readonly repo: DomainsRepository,
    private readonly rules: DomainRules,
  ) {}

  /** Every verified custom domain with the site it serves. */
  allServed(): Promise<Array<ServedSite & { domain: string }>> {
    return this.repo.allServed()
  }

  /** The site a verified custom domain serves (the site not deleted), or null. `domain` may carry a trailing dot or capitals. */
  async findServed(domain: string): Promise<ServedSite | null> {
    const host = requestedHost(domain)
    if (host === null) return null
    return (await this.repo.findServed(host)) ?? null
  }

  /**
   * Whether the proxy may get a certificate for `host`: a verified custom domain of a site that
   * exists, or `{slug}.{site_domain}` of a site with a live version. Previews (`{slug}--v{n}`, a
   * draft's `{slug}--d{token}`) are not: the wildcard certificate of the site domain covers them,
   * and a certificate per version would soon exhaust the certificate authority's rate limits for
   * the domain. `host` is a host name as requestedHost gives it.
   */
  async isCertificateAllowed(host: string): Promise<boolean> {
    const site = parseSiteHost(host, this.rules.siteDomain)
    if (site !== null) return 'version' in site && site.version === null && (await this.repo.isLive(site.slug))
    return (await this.repo.findServed(host)) !== undefined
  }
}
