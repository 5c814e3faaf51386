/**
 * Site passwords: an owner or editor sets or removes one (REST, MCP, the dashboard). Hashed with
 * scrypt as account passwords are; whether a visitor's password opens the site is site-unlocks.ts.
 */
import { hashPassword } from '../core/passwords.ts'
import type { Principal } from '../core/principal.ts'
import { AppError, notFound } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import { SITE_PASSWORD_MAX, SITE_PASSWORD_MIN } from '../core/limits.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { PurgeHook } from './purge-hook.ts'
import type { WebsitesRepository } from './websites.repository.ts'

export interface SitePasswordsOptions {
  access: WebsiteAccess
  repo: WebsitesRepository
  siteEvents: SiteEvents
  purge: PurgeHook
}

export class SitePasswords {
  constructor(private readonly options: SitePasswordsOptions) {}

  /**
   * Sets (a string) or removes (null) the site's password. Every host of the site asks for it from
   * the next request on; unlock cookies handed out for an earlier password stop working.
   */
  async set(principal: Principal, websiteId: string, password: string | null): Promise<void> {
    const { access, repo, siteEvents, purge } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    if (password !== null && (password.length < SITE_PASSWORD_MIN || password.length > SITE_PASSWORD_MAX)) {
      throw new AppError('VALIDATION_FAILED', `A site password has ${SITE_PASSWORD_MIN} to ${SITE_PASSWORD_MAX} characters.`, {
        fields: { password: `must have ${SITE_PASSWORD_MIN} to ${SITE_PASSWORD_MAX} characters` },
      })
    }
    const hash = password === null ? null : await hashPassword(password)
    if (!(await repo.setPassword(site.id, hash, nowIso()))) throw notFound('Website')
    await siteEvents.siteChanged(site.slug)
    // A CDN must not keep serving what was open before.
    purge.siteChanged('protect', site)
  }
}
