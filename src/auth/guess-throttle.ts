/**
 * Counts failed password guesses in the database (so every instance counts the same ones) and
 * says how long a subject must wait once it has guessed wrong too often within a sliding window.
 * A subject is what is throttled: an account, a client address, a site and address together.
 * Used by sign-in and password changes (accounts.service.ts) and by site passwords
 * (websites/site-unlocks.ts). Rate limits count each attempt as one: OAuth client registrations
 * per client address (oauth/oauth.service.ts), editor invitations per owner
 * (websites/members.service.ts).
 */
import { AppError } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import type { SessionsRepository } from './sessions.repository.ts'

export class GuessThrottle {
  constructor(
    private readonly failures: SessionsRepository,
    readonly windowMs: number,
  ) {}

  /** Seconds until every subject is under its limit again; 0 when none is at it. */
  async waitSeconds(limits: ReadonlyArray<readonly [subject: string, limit: number]>): Promise<number> {
    const now = Date.now()
    const since = new Date(now - this.windowMs).toISOString()
    let wait = 0
    for (const [subject, limit] of limits) {
      const { count, oldest } = await this.failures.failuresSince(subject, since)
      if (count >= limit && oldest) wait = Math.max(wait, Math.ceil((Date.parse(oldest) + this.windowMs - now) / 1000))
    }
    return wait
  }

  /** Records a wrong guess against each subject, and forgets guesses older than the window. */
  async recordFailure(subjects: string[]): Promise<void> {
    await this.failures.recordFailure(subjects, nowIso())
    await this.failures.pruneFailures(new Date(Date.now() - this.windowMs).toISOString())
  }

  /** Forgets a subject's wrong guesses (after a right one). */
  async clear(subject: string): Promise<void> {
    await this.failures.clearFailures(subject)
  }
}

/** When a throttled subject may try again, in the words of a message: "Try again in 3 minutes." */
export function tryAgainIn(waitSeconds: number): string {
  const minutes = Math.ceil(waitSeconds / 60)
  return `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`
}

/** RATE_LIMITED for a subject that must wait: what it did too often, when to try again, and the wait in seconds. */
export const throttled = (reason: string, waitSeconds: number): AppError =>
  new AppError('RATE_LIMITED', `${reason}. ${tryAgainIn(waitSeconds)}`, { retryAfterSeconds: waitSeconds })
