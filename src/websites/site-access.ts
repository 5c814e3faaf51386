/**
 * Who may do what to a website, for every service that acts on one (websites, domains, site
 * passwords): its owner and editors see it; only its owner manages it. A site the caller may not
 * see does not exist for them (NOT_FOUND), so its id tells nothing.
 */
import type { Principal } from '../auth/tokens.service.ts'
import { AppError, notFound } from '../core/errors.ts'
import type { VisibleWebsite, WebsitesRepository } from './websites.repository.ts'

type Sites = Pick<WebsitesRepository, 'findVisible'>

/** A website the caller owns or edits: NOT_FOUND otherwise. */
export async function requireVisibleSite(sites: Sites, principal: Principal, websiteId: string): Promise<VisibleWebsite> {
  const site = await sites.findVisible(principal.userId, websiteId)
  if (!site) throw notFound('Website')
  return site
}

/** A website the caller owns: NOT_FOUND when they may not see it, OWNER_ONLY when they edit it. */
export async function requireOwnedSite(sites: Sites, principal: Principal, websiteId: string, action: string): Promise<VisibleWebsite> {
  const site = await requireVisibleSite(sites, principal, websiteId)
  if (site.role !== 'owner') throw new AppError('OWNER_ONLY', `Only the site's owner can ${action}.`)
  return site
}
