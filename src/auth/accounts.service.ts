/**
 * People on the web site: sign-up, sign-in with throttling, server-side sessions, sign-out (here
 * or everywhere) and password changes. Sessions live in the database so that they can be revoked
 * and are honoured by every instance; the cookie carries a random secret whose SHA-256 is the
 * session's id. A session is never a bearer token, and a token never opens a session: the web
 * site reads only its cookie, the API and MCP read only `Authorization`.
 */
import { createHash } from 'node:crypto'
import { clientNetwork } from '../core/client-network.ts'
import { AppError } from '../core/errors.ts'
import { randomBase62 } from '../core/ids.ts'
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_ADDRESS } from '../core/limits.ts'
import { EMAIL_REGISTERED, type UsersService } from '../users/users.service.ts'
import { decoyPasswordHash, verifyPassword } from '../core/passwords.ts'
import { type GuessThrottle, throttled } from './guess-throttle.ts'
import type { SessionsRepository } from './sessions.repository.ts'

/** A session ends after this long unused; each use (at most every few minutes) extends it. */
export const SESSION_IDLE_MS = 30 * 24 * 60 * 60 * 1000
const SESSION_TOUCH_MS = 5 * 60 * 1000

const SECRET_LENGTH = 43

/** The person behind a web request, resolved from the session cookie. */
export interface Account {
  userId: string
  email: string
  name: string | null
  sessionId: string
}

export interface OpenedSession {
  /** Goes in the cookie; never stored. */
  secret: string
  account: Account
  expiresAt: Date
}

/** Who is signing in from where: the throttle counts per address, sessions keep the browser's name. */
export interface ClientInfo {
  address: string
  userAgent: string | null
}

export type Signup = 'open' | 'closed'

/** The apps a person connected over OAuth (oauth/), disconnected when they sign out everywhere or change their password. */
export interface ConnectedApps {
  disconnectAll(userId: string): Promise<void>
}

/** Editors invited by email (websites/members.service.ts): an account takes its invitations up when it signs up or signs in. */
export interface Invitations {
  acceptInvitations(user: { id: string; email: string }): Promise<number>
}

const sessionId = (secret: string): string => createHash('sha256').update(secret).digest('hex')
const WRONG_CREDENTIALS = 'The email or the password is not right.'

export class AccountsService {
  /** `throttle` counts wrong sign-ins and password changes over a window of THROTTLE_WINDOW_MS. */
  constructor(
    private readonly options: {
      users: UsersService
      sessions: SessionsRepository
      throttle: GuessThrottle
      apps: ConnectedApps
      invitations: Invitations
      signup: Signup
    },
  ) {}

  /** Whether people may create accounts on the web site. */
  get signup(): Signup {
    return this.options.signup
  }

  async signUp(input: { email: string; password: string; name?: string }, client: ClientInfo): Promise<OpenedSession> {
    if (this.signup === 'closed') throw new AppError('SIGNUP_CLOSED', 'Sign-up is closed on this Plinth; ask its administrator for an account.')
    await this.assertNotThrottled([addressSubject(client.address)])
    try {
      const user = await this.options.users.create(input)
      return this.open(user, client)
    } catch (error) {
      // A taken address counts as a failure of the client's address, so probing for accounts
      // through the sign-up form is throttled like guessing passwords.
      if (error instanceof AppError && error.fields?.email === EMAIL_REGISTERED) {
        await this.options.throttle.recordFailure([addressSubject(client.address)])
      }
      throw error
    }
  }

  /**
   * Checks the throttle, then the password (an unknown email costs the same scrypt as a known
   * one), and opens a session. Every refusal says the same thing, whichever part was wrong.
   */
  async signIn(email: string, password: string, client: ClientInfo): Promise<OpenedSession> {
    const subjects = [emailSubject(email), addressSubject(client.address)]
    await this.assertNotThrottled(subjects)
    const user = await this.options.users.findByEmail(email)
    const matches = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()))
    if (!user || !matches) {
      await this.options.throttle.recordFailure(subjects)
      throw new AppError('SIGN_IN_FAILED', WRONG_CREDENTIALS, { fields: { email: WRONG_CREDENTIALS } })
    }
    await this.options.throttle.clear(emailSubject(email))
    return this.open(user, client)
  }

  /** The account of a session cookie's secret, or null for a missing, unknown or expired one. */
  async resolve(secret: string | undefined): Promise<Account | null> {
    if (!secret || secret.length !== SECRET_LENGTH || !/^[A-Za-z0-9]+$/.test(secret)) return null
    const id = sessionId(secret)
    const row = await this.options.sessions.find(id)
    if (!row) return null
    const now = Date.now()
    if (Date.parse(row.expires_at) <= now) {
      await this.options.sessions.delete(id)
      return null
    }
    if (now - Date.parse(row.last_seen_at) > SESSION_TOUCH_MS) {
      await this.options.sessions.extend(id, new Date(now).toISOString(), new Date(now + SESSION_IDLE_MS).toISOString())
    }
    return { userId: row.user_id, email: row.email, name: row.name, sessionId: id }
  }

  async signOut(account: Account): Promise<void> {
    await this.options.sessions.delete(account.sessionId)
  }

  /** Ends every session of the account, this one included, and disconnects its apps; how many sessions ended. */
  async signOutEverywhere(account: Account): Promise<number> {
    await this.options.apps.disconnectAll(account.userId)
    return this.options.sessions.deleteAllOf(account.userId)
  }

  /**
   * Sets a new password after checking the current one, throttled as sign-in is (a wrong current
   * password counts as a failed sign-in of the account and of the client's address); every other
   * session of the account ends, and its apps are disconnected.
   */
  async changePassword(account: Account, current: string, next: string, client: ClientInfo): Promise<void> {
    const subjects = [emailSubject(account.email), addressSubject(client.address)]
    await this.assertNotThrottled(subjects)
    const user = await this.options.users.findById(account.userId)
    if (!user || !(await verifyPassword(current, user.password_hash))) {
      await this.options.throttle.recordFailure(subjects)
      throw new AppError('VALIDATION_FAILED', 'The current password is not right.', { fields: { currentPassword: 'is not right' } })
    }
    await this.options.users.setPassword(user.id, next)
    await this.options.throttle.clear(emailSubject(account.email))
    await this.options.sessions.deleteAllOf(account.userId, account.sessionId)
    await this.options.apps.disconnectAll(account.userId)
  }

  /** Opens a session, once the person's invitations to edit sites are taken up. */
  private async open(user: { id: string; email: string; name: string | null }, client: ClientInfo): Promise<OpenedSession> {
    await this.options.invitations.acceptInvitations(user)
    const secret = randomBase62(SECRET_LENGTH)
    const id = sessionId(secret)
    const now = Date.now()
    const expiresAt = new Date(now + SESSION_IDLE_MS)
    const at = new Date(now).toISOString()
    await this.options.sessions.insert({
      id,
      user_id: user.id,
      created_at: at,
      last_seen_at: at,
      expires_at: expiresAt.toISOString(),
      user_agent: client.userAgent?.slice(0, 300) ?? null,
    })
    await this.options.sessions.deleteExpired(at)
    return { secret, account: { userId: user.id, email: user.email, name: user.name, sessionId: id }, expiresAt }
  }

  /** RATE_LIMITED with the seconds to wait when any subject has too many recent failures. */
  private async assertNotThrottled(subjects: string[]): Promise<void> {
    const waitSeconds = await this.options.throttle.waitSeconds(
      subjects.map((subject) => [subject, subject.startsWith('email:') ? SIGN_IN_FAILURES_PER_ACCOUNT : SIGN_IN_FAILURES_PER_ADDRESS] as const),
    )
    if (waitSeconds > 0) throw throttled('Too many failed sign-ins', waitSeconds)
  }
}

const emailSubject = (email: string): string => `email:${email.trim().toLowerCase()}`
const addressSubject = (address: string): string => `address:${clientNetwork(address)}`
