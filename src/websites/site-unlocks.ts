/**
 * Whether a visitor's password opens a protected site: the SiteUnlocker port of
 * serving/site-lock.ts. Wrong guesses are counted in the database per site and client address, so
 * every instance refuses the same guesser.
 */
import type { GuessThrottle } from '../auth/guess-throttle.ts'
import { clientNetwork } from '../core/client-network.ts'
import { verifyPassword } from '../core/passwords.ts'
import { SITE_PASSWORD_MAX } from '../core/limits.ts'
import type { SiteUnlocker, UnlockResult } from '../serving/site-lock.ts'
import type { WebsitesRepository } from './websites.repository.ts'

/** Wrong passwords one client address may try on one site per throttle window. */
export const SITE_UNLOCK_FAILURES_PER_ADDRESS = 10

export class SiteUnlocks implements SiteUnlocker {
  constructor(
    private readonly repo: Pick<WebsitesRepository, 'passwordOf'>,
    private readonly throttle: GuessThrottle,
  ) {}

  async unlock(websiteId: string, password: string, address: string): Promise<UnlockResult> {
    const { repo, throttle } = this
    const subject = `site:${websiteId}:${clientNetwork(address)}`
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
