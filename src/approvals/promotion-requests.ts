/**
 * Promotion requests: a caller that may publish asks for a version to go live, and a person (the
 * site's owner or an editor) approves it on the dashboard, which makes it live, or declines it with
 * a reason. The requester reads the outcome. A second request for a version that already has a
 * pending one answers that one; a request for the live version is ALREADY_LIVE. An approval
 * promotes the very version asked for, even when another went live meanwhile: a person chose it.
 * Anyone who edits the site (the requester among them) may withdraw a pending request: it is
 * then `cancelled`, and no one can approve it. A version made live another way (promoted at once,
 * or by a schedule) has its pending request approved by whoever made it live.
 *
 * Each request and decision is recorded with its webhook event (`promotion.requested`,
 * `promotion.decided`) and, when SMTP is set up, mailed to the site's owner and editors.
 */
import type { Config } from '../config.ts'
import type { PromotionRequestStatus } from '../core/enums.ts'
import { AppError, notFound } from '../core/errors.ts'
import { newId } from '../core/ids.ts'
import type { Principal } from '../core/principal.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { Warning } from '../core/schemas.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { FileSetComparison, VersionFiles } from '../websites/version-files.ts'
import type { VersionPromotion } from '../websites/version-promotion.ts'
import { requireVersion, type VersionRef } from '../websites/version-refs.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import type { ApprovalsRepository, PromotionRequestRow } from './approvals.repository.ts'
import type { PromotionRequest } from './approvals.schemas.ts'

/** Tells people of a new request (promotion-mail.ts); does nothing without SMTP. */
export interface PromotionNotices {
  requested(site: { id: string; name: string }, request: PromotionRequest): void
}

export interface PromotionRequestsOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain'>
  access: WebsiteAccess
  versions: WebsitesRepository
  repo: ApprovalsRepository
  promotion: VersionPromotion
  versionFiles: VersionFiles
  webhookEvents: WebhookEvents
  notices: PromotionNotices
  now: () => Date
}

/** What a person deciding a request is shown: the request, the diff against the live version and the version's site check warnings. */
export interface PromotionReview {
  request: PromotionRequest
  site: VisibleWebsite
  /** Null when the site has no live version to compare with. */
  diff: FileSetComparison | null
  warnings: Warning[]
}

export class PromotionRequests {
  constructor(private readonly options: PromotionRequestsOptions) {}

  /** Asks for a version to go live: the new request (`created`), or the pending one the version already had. */
  async request(
    principal: Principal,
    websiteId: string,
    versionId: VersionRef,
    input: { note?: string },
  ): Promise<{ created: boolean; request: PromotionRequest }> {
    const { access, versions, repo, webhookEvents, now } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const version = await requireVersion(versions, site.id, versionId)
    if (version.status !== 'ready') throw new AppError('VALIDATION_FAILED', 'Only a ready version can be promoted.', { fields: { versionId: 'is not ready' } })
    if (version.id === site.current_version_id) {
      throw new AppError('ALREADY_LIVE', `Version ${version.number} is the live version already: there is nothing to approve.`, {
        fields: { versionId: 'is live already' },
      })
    }
    const note = input.note?.trim() ? input.note.trim() : null
    const outcome = await repo.transaction(async (trx) => {
      const pending = await repo.pendingFor(trx, site.id, version.id)
      if (pending) return { created: false, row: pending }
      const row = {
        id: newId('prq'),
        website_id: site.id,
        version_id: version.id,
        status: 'pending' as const,
        note,
        requested_by: principal.userId,
        created_at: now().toISOString(),
        decided_by: null,
        decided_at: null,
        reason: null,
      }
      await repo.insertRequest(trx, row)
      const view = this.view(site.slug, { ...row, version_number: version.number })
      await webhookEvents.emit(trx, site.id, 'promotion.requested', { ...view })
      return { created: true, row: { ...row, version_number: version.number } }
    })
    const request = this.view(site.slug, outcome.row)
    if (outcome.created) this.options.notices.requested(site, request)
    return { created: outcome.created, request }
  }

  async get(principal: Principal, websiteId: string, requestId: string): Promise<PromotionRequest> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    return this.view(site.slug, await this.find(site.id, requestId))
  }

  async list(principal: Principal, websiteId: string, status?: PromotionRequestStatus): Promise<{ items: PromotionRequest[] }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const rows = await this.options.repo.listRequests(site.id, status)
    return { items: rows.map((row) => this.view(site.slug, row)) }
  }

  /** The request with what deciding it takes: the diff against the live version and the version's warnings. */
  async review(principal: Principal, websiteId: string, requestId: string): Promise<PromotionReview> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const row = await this.find(site.id, requestId)
    const diff = site.current_version_id === null ? null : await this.options.versionFiles.compare(principal, site.id, site.current_version_id, row.version_id)
    const warnings = (await this.options.versions.warningsOf([row.version_id])).get(row.version_id) ?? []
    return { request: this.view(site.slug, row), site, diff, warnings }
  }

  /**
   * A person approves: the request is taken (so no one else decides it too), then its version goes
   * live. When that fails (a collection now claims its paths), the request is pending again and the
   * failure is the caller's.
   */
  async approve(principal: Principal, websiteId: string, requestId: string): Promise<PromotionRequest> {
    const { access, repo, promotion, webhookEvents } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const row = await this.find(site.id, requestId)
    const decided = this.decision(principal, 'approved', null)
    if (!(await repo.decide(repo.db, row.id, decided))) throw notPending(row)
    try {
      await promotion.promote(principal, site.id, row.version_id)
    } catch (error) {
      await repo.reopen(row.id)
      throw error
    }
    const view = this.view(site.slug, { ...row, ...decided })
    await webhookEvents.emit(repo.db, site.id, 'promotion.decided', { ...view })
    return view
  }

  /**
   * A version made live other than by approving its request (promoted at once, or by a schedule):
   * its pending request, if it has one, is approved by whoever made it live, with its webhook event.
   * The requester asked for exactly this, and no one is left to approve a version already live.
   */
  async approveByPromotion(principal: Principal, websiteId: string, versionId: string): Promise<void> {
    const { access, repo, webhookEvents } = this.options
    if (!(await repo.pendingFor(repo.db, websiteId, versionId))) return
    const site = await access.requireSite(principal, websiteId, 'see')
    await repo.transaction(async (trx) => {
      const pending = await repo.pendingFor(trx, site.id, versionId)
      if (!pending) return
      const decided = this.decision(principal, 'approved', null)
      if (await repo.decide(trx, pending.id, decided))
        await webhookEvents.emit(trx, site.id, 'promotion.decided', { ...this.view(site.slug, { ...pending, ...decided }) })
    })
  }

  /** A person declines, saying why: the live version stays. */
  decline(principal: Principal, websiteId: string, requestId: string, reason: string): Promise<PromotionRequest> {
    return this.close(principal, websiteId, requestId, 'declined', reason.trim() || 'Declined.')
  }

  /** Withdraws a pending request (an agent that found a mistake, or a person): `cancelled`; the live version stays. */
  withdraw(principal: Principal, websiteId: string, requestId: string): Promise<PromotionRequest> {
    return this.close(principal, websiteId, requestId, 'cancelled', null)
  }

  /** Ends a pending request without promoting it, with its webhook event; NOT_PENDING when it was decided or withdrawn already. */
  private async close(
    principal: Principal,
    websiteId: string,
    requestId: string,
    status: 'declined' | 'cancelled',
    reason: string | null,
  ): Promise<PromotionRequest> {
    const { access, repo, webhookEvents } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const row = await this.find(site.id, requestId)
    const closed = this.decision(principal, status, reason)
    const view = this.view(site.slug, { ...row, ...closed })
    await repo.transaction(async (trx) => {
      if (!(await repo.decide(trx, row.id, closed))) throw notPending(row)
      await webhookEvents.emit(trx, site.id, 'promotion.decided', { ...view })
    })
    return view
  }

  /** The columns an outcome sets: who decided it, now, and why. */
  private decision<S extends Exclude<PromotionRequestStatus, 'pending'>>(principal: Principal, status: S, reason: string | null) {
    return { status, decided_by: principal.userId, decided_at: this.options.now().toISOString(), reason }
  }

  private async find(websiteId: string, requestId: string): Promise<PromotionRequestRow> {
    const row = await this.options.repo.findRequest(websiteId, requestId)
    if (!row) throw notFound('Promotion request')
    return row
  }

  private view(slug: string, row: PromotionRequestRow): PromotionRequest {
    return {
      requestId: row.id,
      websiteId: row.website_id,
      versionId: row.version_id,
      version: row.version_number,
      status: row.status,
      note: row.note,
      previewUrl: pageUrlFor(this.options.config, slug, row.version_number),
      createdAt: row.created_at,
      ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
      ...(row.reason === null ? {} : { reason: row.reason }),
    }
  }
}

const notPending = (row: PromotionRequestRow) =>
  new AppError('NOT_PENDING', `This request is ${row.status === 'pending' ? 'decided or withdrawn' : row.status} already.`)
