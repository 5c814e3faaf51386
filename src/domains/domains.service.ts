/**
 * Custom domains: a site's owner adds a domain, proves control of it with a DNS TXT record, and
 * removes it; editors see the list. Offered on the dashboard only: no REST route or MCP tool
 * reaches it, so no token can move a site onto a domain.
 */
import { randomBytes } from 'node:crypto'
import { domainToUnicode } from 'node:url'
import type { Principal } from '../core/principal.ts'
import { AppError, notFound, validationFailed } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import { DOMAINS_PER_SITE, PENDING_CLAIM_DAYS } from '../core/limits.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { CustomDomainRow } from '../db/types.ts'
import type { SiteEventBus } from '../serving/site-events.ts'
import type { ChallengeChecker } from './dns-check.ts'
import { challengeRecordName, checkDomain, type DomainRules, domainUrl, requestedHost } from './domain-names.ts'
import type { DomainSite, DomainsRepository } from './domains.repository.ts'

/** Serving is told when a domain starts or stops serving a site, on every instance. */
export type DomainEvents = Pick<SiteEventBus, 'domainChanged'>

export interface DomainsServiceOptions {
  repo: DomainsRepository
  /** Which sites a person may see and own. */
  access: WebsiteAccess
  rules: DomainRules
  checker: ChallengeChecker
  events: DomainEvents
  /** Scheme of published sites (config.siteScheme), for the address a verified domain serves. */
  scheme: string
}

/** A custom domain as the dashboard shows it. */
export interface CustomDomainView {
  /** As stored: lowercase ASCII, punycode for international names. */
  domain: string
  /** As people read it (Unicode for international names). */
  displayName: string
  status: 'pending' | 'verified'
  /** The TXT record that proves control of the domain. */
  record: { name: string; type: 'TXT'; value: string }
  /** Where the site is served once verified. */
  url: string | null
  createdAt: string
  verifiedAt: string | null
  lastCheckedAt: string | null
  lastError: string | null
}

export interface SiteDomains {
  site: DomainSite
  domains: CustomDomainView[]
  /** The host a domain's CNAME record points at: the site's own address. */
  cnameTarget: string
  limit: number
  /** How long an unverified domain is held for the site. */
  pendingClaimDays: number
}

export class DomainsService {
  constructor(private readonly options: DomainsServiceOptions) {}

  /** A site's domains, for its owner and editors. */
  async list(principal: Principal, websiteId: string): Promise<SiteDomains> {
    const site = domainSite(await this.options.access.requireSite(principal, websiteId, 'see'))
    const rows = await this.options.repo.listForSite(site.id)
    return {
      site,
      domains: rows.map((row) => this.view(row)),
      cnameTarget: `${site.slug}.${this.options.rules.siteDomain}`,
      limit: DOMAINS_PER_SITE,
      pendingClaimDays: PENDING_CLAIM_DAYS,
    }
  }

  /** Adds a domain to a site (owner only), pending until its TXT record is seen. */
  async add(principal: Principal, websiteId: string, input: string): Promise<CustomDomainView> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'add domains')
    const checked = checkDomain(input, this.options.rules)
    if (checked.problem !== undefined) throw validationFailed({ domain: checked.problem }, checked.problem)
    const domain = checked.domain

    const held = await this.options.repo.find(domain)
    if (held?.website_id === site.id) throw validationFailed({ domain: 'is added already' }, `${domainToUnicode(domain)} is added to this site already.`)
    const staleBefore = new Date(Date.now() - PENDING_CLAIM_DAYS * 24 * 60 * 60 * 1000).toISOString()
    if (held && !(await this.options.repo.releaseStalePending(domain, site.id, staleBefore))) throw taken(domain)
    // Counted before the insert, not with it: two adds to one site at the same instant may pass
    // the cap by one, which costs nothing (the cap keeps a page and a DNS zone readable).
    if ((await this.options.repo.countForSite(site.id)) >= DOMAINS_PER_SITE) {
      const message = `A site has at most ${DOMAINS_PER_SITE} custom domains; remove one to add another.`
      throw validationFailed({ domain: message }, message)
    }

    const row: CustomDomainRow = {
      domain,
      website_id: site.id,
      challenge: `plinth-verify=${randomBytes(24).toString('base64url')}`,
      created_by: principal.userId,
      created_at: nowIso(),
      verified_at: null,
      last_checked_at: null,
      last_error: null,
    }
    try {
      await this.options.repo.insert(row)
    } catch (error) {
      // Another site claimed it between the look-up and the insert.
      if (isUniqueViolation(error)) throw taken(domain)
      throw error
    }
    return this.view(row)
  }

  /**
   * Looks for the domain's TXT challenge (owner only) and marks the domain verified when it is
   * there. A failed check is recorded (shown with the domain) and thrown with the reason.
   */
  async verify(principal: Principal, websiteId: string, domain: string): Promise<CustomDomainView> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'verify domains')
    const row = await this.requireDomain(site, domain)
    if (row.verified_at !== null) return this.view(row)

    const result = await this.options.checker.check(row.domain, row.challenge)
    const at = nowIso()
    if (!result.found) {
      await this.options.repo.recordCheck(row.domain, site.id, { at, verifiedAt: null, error: result.problem })
      // The DNS not answering is not the record's fault: told apart from a missing or wrong record.
      throw new AppError(result.unreachable ? 'FETCH_FAILED' : 'VALIDATION_FAILED', result.problem, { fields: { domain: result.problem } })
    }
    if (!(await this.options.repo.recordCheck(row.domain, site.id, { at, verifiedAt: at, error: null }))) throw notFound('Domain')
    // Every instance reads the domain's mapping again (and forgets the host parses it remembered).
    await this.options.events.domainChanged(row.domain)
    return this.view({ ...row, verified_at: at, last_checked_at: at, last_error: null })
  }

  /** Removes a domain from a site (owner only); a verified one stops serving the site at once. */
  async remove(principal: Principal, websiteId: string, domain: string): Promise<void> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'remove domains')
    const row = await this.requireDomain(site, domain)
    if (!(await this.options.repo.delete(row.domain, site.id))) throw notFound('Domain')
    await this.options.events.domainChanged(row.domain)
  }

  private view(row: CustomDomainRow): CustomDomainView {
    const verified = row.verified_at !== null
    return {
      domain: row.domain,
      displayName: domainToUnicode(row.domain) || row.domain,
      status: verified ? 'verified' : 'pending',
      record: { name: challengeRecordName(row.domain), type: 'TXT', value: row.challenge },
      url: verified ? domainUrl(row.domain, this.options.scheme, this.options.rules) : null,
      createdAt: row.created_at,
      verifiedAt: row.verified_at,
      lastCheckedAt: row.last_checked_at,
      lastError: row.last_error,
    }
  }

  private async requireDomain(site: DomainSite, domain: string): Promise<CustomDomainRow> {
    const name = requestedHost(domain)
    const row = name === null ? undefined : await this.options.repo.find(name)
    if (!row || row.website_id !== site.id) throw notFound('Domain')
    return row
  }
}

/** The domain is another site's: said without naming which, or whose. */
function taken(domain: string): AppError {
  const message = `${domainToUnicode(domain) || domain} is added to another site already. If the domain is yours, remove it there first; a domain never verified is freed after ${PENDING_CLAIM_DAYS} days.`
  return new AppError('SLUG_TAKEN', message, { fields: { domain: message } })
}

/** The fields of a site that the domains pages show. */
const domainSite = (site: VisibleWebsite): DomainSite => ({ id: site.id, name: site.name, slug: site.slug, role: site.role })
