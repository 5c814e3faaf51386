/**
 * Who may work on a website: its owner, its editors, and the people invited by email.
 *
 * An owner adds an editor by email, and always gets the same answer: the email is invited, and
 * the invitation takes effect when an account with that email signs up or signs in (or is made
 * with `plinth user create`), so adding an editor never tells whether an email has an account.
 * Pending invitations are listed to the owner, who may withdraw them; inviting is rate limited
 * per owner. The administrator's `plinth site share` makes an existing account an editor at once
 * and invites an email without one.
 */
import { type GuessThrottle, throttled } from '../auth/guess-throttle.ts'
import type { Principal } from '../core/principal.ts'
import type { Role } from '../core/enums.ts'
import { notFound, validationFailed } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import { INVITATIONS_PER_ACCOUNT, PENDING_INVITATIONS_PER_SITE } from '../core/limits.ts'
import { isEmailAddress, normalizeEmail } from '../users/email-address.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { InvitationsRepository } from './invitations.repository.ts'
import type { WebsitesRepository } from './websites.repository.ts'

/** Someone who may work on a website: its owner, or an editor it is shared with. */
export interface WebsiteMember {
  userId: string
  email: string
  name: string | null
  role: Role
  /** When they became a member; the site's creation for its owner. */
  addedAt: string
}

/** An email invited to edit a website, until an account with it signs up or signs in. */
export interface Invitation {
  email: string
  invitedAt: string
}

/** What `plinth site share` did: made an existing account an editor, or invited an email without one. */
export type ShareOutcome = 'editor' | 'invited'

export class MembersService {
  /** `throttle` counts invitations per owner over its window (INVITATIONS_PER_ACCOUNT). */
  constructor(private readonly options: { access: WebsiteAccess; sites: WebsitesRepository; invitations: InvitationsRepository; throttle: GuessThrottle }) {}

  /** Who may work on a website: its owner first, then its editors in the order they were added. */
  async members(principal: Principal, websiteId: string): Promise<WebsiteMember[]> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const rows = await this.options.sites.listMembers(site.id)
    return rows.map((row) => ({ userId: row.user_id, email: row.email, name: row.name, role: row.role, addedAt: row.added_at }))
  }

  /** The emails invited to edit a website and not yet members (owner only). */
  async pendingInvitations(principal: Principal, websiteId: string): Promise<Invitation[]> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'see its invitations')
    return (await this.options.invitations.listOf(site.id)).map((row) => ({ email: row.email, invitedAt: row.created_at }))
  }

  /**
   * Invites an email to edit a website (owner only); the normalized email. The answer is the same
   * whether or not the email has an account; one already a member stays as they are.
   */
  async addEditor(principal: Principal, websiteId: string, email: string): Promise<string> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'add editors')
    const normalized = validEmail(email)
    if (normalized === principal.email.toLowerCase()) throw validationFailed({ email: `${normalized} already owns this website` })
    const subject = `invite:${principal.userId}`
    const waitSeconds = await this.options.throttle.waitSeconds([[subject, INVITATIONS_PER_ACCOUNT]])
    if (waitSeconds > 0) throw throttled('Too many editors invited', waitSeconds)
    await this.options.throttle.recordFailure([subject])
    if ((await this.options.sites.listMembers(site.id)).some((member) => member.email === normalized)) return normalized
    await this.invite(site.id, normalized, principal.userId)
    return normalized
  }

  /** Takes a website away from one of its editors (owner only). */
  async removeEditor(principal: Principal, websiteId: string, userId: string): Promise<void> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'remove editors')
    if (userId === site.owner_id) throw validationFailed({ userId: 'is the owner, who cannot be removed (delete the website instead)' })
    if (!(await this.options.sites.deleteMember(site.id, userId))) throw notFound('Editor')
  }

  /** Withdraws a pending invitation (owner only). */
  async removeInvitation(principal: Principal, websiteId: string, email: string): Promise<void> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'withdraw invitations')
    if (!(await this.options.invitations.delete(site.id, normalizeEmail(email)))) throw notFound('Invitation')
  }

  /**
   * Shares a website as the administrator (no visibility check, no rate limit): an account with
   * the email becomes an editor at once; an email without one is invited.
   */
  async share(websiteId: string, email: string, role: string): Promise<ShareOutcome> {
    if (role !== 'editor') throw validationFailed({ role: 'must be "editor"' })
    const site = await this.options.sites.findById(websiteId)
    if (!site || site.status === 'deleted') throw notFound(`Website ${websiteId}`)
    const normalized = validEmail(email)
    const user = await this.options.sites.findUserByEmail(normalized)
    if (!user) {
      await this.invite(site.id, normalized, site.owner_id)
      return 'invited'
    }
    if (site.owner_id === user.id) throw validationFailed({ email: `${user.email} already owns this website` })
    await this.options.sites.upsertMember(site.id, user.id, 'editor', nowIso())
    return 'editor'
  }

  /** Makes a person who signed up or signed in an editor of every site their email was invited to; how many. */
  acceptInvitations(user: { id: string; email: string }): Promise<number> {
    return this.options.invitations.accept({ id: user.id, email: normalizeEmail(user.email) }, nowIso())
  }

  private async invite(websiteId: string, email: string, invitedBy: string): Promise<void> {
    if ((await this.options.invitations.countOf(websiteId)) >= PENDING_INVITATIONS_PER_SITE) {
      throw validationFailed({ email: `cannot be invited: the site has ${PENDING_INVITATIONS_PER_SITE} invitations nobody took up yet; withdraw some first` })
    }
    await this.options.invitations.insert({ website_id: websiteId, email, invited_by: invitedBy, created_at: nowIso() })
  }
}

function validEmail(email: string): string {
  const normalized = normalizeEmail(email)
  if (normalized === '') throw validationFailed({ email: 'is required' })
  if (!isEmailAddress(normalized)) throw validationFailed({ email: 'must be an email address' })
  return normalized
}
