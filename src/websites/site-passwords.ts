/**
 * Site passwords: an owner or editor sets or removes one (REST, MCP, the dashboard), and the site
 * server asks whether a visitor's password opens the site (the SiteUnlocker port of
 * serving/site-lock.ts). Hashed with scrypt as account passwords are; wrong guesses are counted in
 * the database per site and client address, so every instance refuses the same guesser.
 */
import type { GuessThrottle } from '../auth/guess-throttle.ts'
import { hashPassword, verifyPassword } from '../auth/passwords.ts'
import type { Principal } from '../auth/tokens.service.ts'
import { AppError, notFound } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import { SITE_PASSWORD_MAX, SITE_PASSWORD_MIN } from '../core/limits.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { SiteUnlocker, UnlockResult } from '../serving/site-lock.ts'
import type { PurgeHook } from './purge-hook.ts'
import type { WebsitesRepository } from './websites.repository.ts'

/** Wrong passwords one client address may try on one site per throttle window. */
export const SITE_UNLOCK_FAILURES_PER_ADDRESS = 10

export interface SitePasswordsOptions {
  repo: WebsitesRepository
  throttle: GuessThrottle
  siteEvents: SiteEvents
  purge: PurgeHook
}

export class SitePasswords implements SiteUnlocker {
  constructor(private readonly options: SitePasswordsOptions) {}

  /**
   * Sets (a string) or removes (null) the site's password. Every host of the site asks for it from
   * the next request on; unlock cookies handed out for an earlier password stop working.
   */
  async set(principal: Principal, websiteId: string, password: string | null): Promise<void> {
    const { repo, siteEvents, purge } = this.options
    const site = await repo.findVisible(principal.userId, websiteId)
    if (!site) throw notFound('Website')
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

  async unlock(websiteId: string, password: string, address: string): Promise<UnlockResult> {
    const { repo, throttle } = this.options
    const subject = `site:${websiteId}:${address}`
    const wait = await throttle.waitSeconds([[subject, SITE_UNLOCK_FAILURES_PER_ADDRESS]])
    if (wait > 0) return { ok: false, retryAfterSeconds: wait }
    const site = await repo.passwordOf(websiteId)
    // Removed meanwhile: the site is open.
    if (!site || site.password_hash === null) return { ok: true }
    if (password.length > SITE_PASSWORD_MAX || !(await verifyPassword(password, site.password_hash))) {
      await throttle.recordFailure([subject])
      return { ok: false, retryAfterSeconds: null }
    }
    await throttle.clear(subject)
    return { ok: true }
  }
}
