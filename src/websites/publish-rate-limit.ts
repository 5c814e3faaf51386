import { AppError } from '../core/errors.ts'
import type { Executor, WebsitesRepository } from './websites.repository.ts'

const WINDOW_SECONDS = 60

export interface RateLimitState {
  limit: number
  remaining: number
  /** Seconds until the window frees a publish again. */
  resetSeconds: number
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): policy and current state. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Policy': `"publish";q=${state.limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"publish";r=${state.remaining};t=${state.resetSeconds}`,
  }
}

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
    if (count >= this.perMinute) {
      const state = { limit: this.perMinute, remaining: 0, resetSeconds }
      throw new AppError('RATE_LIMITED', `Publish rate limit reached: at most ${this.perMinute} publishes per minute. Retry in ${resetSeconds} seconds.`, {
        headers: { 'Retry-After': String(resetSeconds), ...rateLimitHeaders(state) },
      })
    }
    return { limit: this.perMinute, remaining: this.perMinute - count - 1, resetSeconds }
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
