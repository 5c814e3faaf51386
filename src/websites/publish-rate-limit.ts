import { AppError, type RateLimitState } from '../core/errors.ts'
import type { Executor, WebsitesRepository } from './websites.repository.ts'

const WINDOW_SECONDS = 60
const POLICY = 'publish'

/**
 * Publishes per user per sliding minute, counted from the versions table itself: the count is
 * shared by every instance on the same database and needs no state of its own. A publish that
 * fails validation stores no version and so does not count.
 */
export class PublishRateLimiter {
  constructor(
    private readonly repo: WebsitesRepository,
    private readonly perMinute: number,
  ) {}

  /** Throws RATE_LIMITED when the user has no publish left; else the state after this publish. */
  async take(userId: string, db?: Executor): Promise<RateLimitState> {
    const now = Date.now()
    const { count, oldest } = await this.repo.publishesSince(userId, new Date(now - WINDOW_SECONDS * 1000).toISOString(), db)
    const resetSeconds = oldest ? Math.max(1, Math.ceil((Date.parse(oldest) + WINDOW_SECONDS * 1000 - now) / 1000)) : WINDOW_SECONDS
    const state = (remaining: number): RateLimitState => ({ policy: POLICY, limit: this.perMinute, remaining, windowSeconds: WINDOW_SECONDS, resetSeconds })
    if (count >= this.perMinute) {
      throw new AppError('RATE_LIMITED', `Publish rate limit reached: at most ${this.perMinute} publishes per minute. Retry in ${resetSeconds} seconds.`, {
        retryAfterSeconds: resetSeconds,
        rateLimit: state(0),
      })
    }
    return state(this.perMinute - count - 1)
  }

  /**
   * take() again inside the transaction that stores the version, with the user's row locked first:
   * concurrent publishes that all passed the early check cannot overshoot the limit together.
   */
  async takeInTransaction(trx: Executor, userId: string): Promise<RateLimitState> {
    await this.repo.lockUser(trx, userId)
    return this.take(userId, trx)
  }
}
