/**
 * Scheduled promotions: a version made live at a time given to the minute. Every instance looks
 * for due schedules each half minute (and at start, so one due while no instance ran is run by
 * the first to start) and claims each with a conditional UPDATE: of instances claiming at once,
 * exactly one runs it. A claim is a lease: a schedule whose instance stopped while running it is
 * taken up again once the lease runs out (a promotion done twice is the same promotion).
 *
 * A schedule promotes as the person who made it, so one whose maker lost access to the site fails
 * (NOT_FOUND), as does a version a collection now shadows (PROMOTE_CONFLICT); the schedule's
 * `error` says why.
 */
import { randomUUID } from 'node:crypto'
import type { Config } from '../config.ts'
import { AppError, notFound } from '../core/errors.ts'
import { futureTime, storedExpiry } from '../core/future-time.ts'
import { newId } from '../core/ids.ts'
import type { Principal } from '../core/principal.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { VersionPromoter } from '../websites/version-promotion.ts'
import { requireVersion, type VersionRef } from '../websites/version-refs.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import type { ApprovalsRepository, ScheduleRow } from './approvals.repository.ts'
import type { PreviewExpiry, Schedule } from './approvals.schemas.ts'

/** How often an instance looks for due schedules: a schedule runs within a minute of its time. */
export const SCHEDULE_CHECK_MS = 30_000
/** How long an instance holds a schedule it runs before another may take it up. */
const CLAIM_MS = 5 * 60_000
/** Due schedules taken up per look. */
const DUE_PER_RUN = 50
export interface PromotionSchedulesOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain'>
  access: WebsiteAccess
  versions: WebsitesRepository
  repo: ApprovalsRepository
  promotion: VersionPromoter
  siteEvents: SiteEvents
  now: () => Date
  log: { warn(obj: unknown, msg?: string): void }
}

export class PromotionSchedules {
  constructor(private readonly options: PromotionSchedulesOptions) {}

  /** Schedules `versionId` to go live at `promoteAt`. */
  async schedule(principal: Principal, websiteId: string, versionId: VersionRef, promoteAt: string): Promise<Schedule> {
    const { access, versions, repo, now } = this.options
    const at = futureTime(promoteAt, now(), 'promoteAt')
    const site = await access.requireSite(principal, websiteId, 'edit')
    const version = await requireVersion(versions, site.id, versionId)
    if (version.status !== 'ready') throw new AppError('VALIDATION_FAILED', 'Only a ready version can be promoted.', { fields: { versionId: 'is not ready' } })
    const row = {
      id: newId('sch'),
      website_id: site.id,
      version_id: version.id,
      kind: 'promote' as const,
      run_at: at.toISOString(),
      status: 'pending' as const,
      created_by: principal.userId,
      created_at: now().toISOString(),
      claim: null,
      claimed_until: null,
      finished_at: null,
      error: null,
    }
    await repo.insertSchedule(row)
    return view({ ...row, version_number: version.number })
  }

  async list(principal: Principal, websiteId: string): Promise<{ items: Schedule[] }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    return { items: (await this.options.repo.listSchedules(site.id)).map(view) }
  }

  /** Cancels a schedule that has not run, and answers it cancelled: NOT_PENDING once it ran, runs, or was cancelled. */
  async cancel(principal: Principal, websiteId: string, scheduleId: string): Promise<Schedule> {
    const { access, repo, now } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const row = await repo.findSchedule(site.id, scheduleId)
    if (!row) throw notFound('Schedule')
    const at = now().toISOString()
    if (!(await repo.cancel(row.id, at))) throw new AppError('NOT_PENDING', `This schedule is ${row.status === 'pending' ? 'running' : row.status} already.`)
    return view({ ...row, status: 'cancelled', finished_at: at })
  }

  /** Sets (or, with null, removes) the time from which a version that is not live is no longer served at its preview URL. */
  async setPreviewExpiry(principal: Principal, websiteId: string, versionId: string, expiresAt: string | null): Promise<PreviewExpiry> {
    const { access, versions, repo, siteEvents, now, config } = this.options
    const at = storedExpiry(expiresAt, now())
    const site = await access.requireSite(principal, websiteId, 'edit')
    const version = await requireVersion(versions, site.id, versionId)
    if (version.id === site.current_version_id && at !== null) {
      throw new AppError('ALREADY_LIVE', `Version ${version.number} is live: only a version that is not live can be given an expiry.`, {
        fields: { versionId: 'is live' },
      })
    }
    await repo.setPreviewExpiry(site.id, version.id, at)
    await siteEvents.siteChanged(site.slug)
    return { versionId: version.id, version: version.number, previewUrl: pageUrlFor(config, site.slug, version.number), expiresAt: at }
  }

  /** Runs the schedules due now that this instance claims; how many it ran. */
  async runDue(): Promise<number> {
    const { repo, now } = this.options
    let ran = 0
    for (const id of await repo.dueIds(now().toISOString(), DUE_PER_RUN)) {
      const at = now()
      const claim = randomUUID()
      const row = await repo.claim(id, claim, at.toISOString(), new Date(at.getTime() + CLAIM_MS).toISOString())
      if (!row) continue
      await this.run(row, claim)
      ran++
    }
    return ran
  }

  private async run(row: ScheduleRow, claim: string): Promise<void> {
    const { repo, promotion, now, log } = this.options
    let error: string | null = null
    try {
      const user = await repo.userOf(row.created_by)
      if (!user) throw new AppError('NOT_FOUND', 'The person who scheduled this promotion no longer has an account.')
      const principal: Principal = { userId: user.id, email: user.email, name: user.name, tokenId: '', access: 'both', capabilities: null, sites: null }
      await promotion.promote(principal, row.website_id, row.version_id)
    } catch (err) {
      if (!(err instanceof AppError)) log.warn({ err, scheduleId: row.id }, 'a scheduled promotion failed')
      error = err instanceof AppError ? err.message : 'The promotion failed; see the server log.'
    }
    await repo.finish(row.id, claim, { status: error === null ? 'done' : 'failed', finished_at: now().toISOString(), error })
  }
}

function view(row: ScheduleRow): Schedule {
  return {
    scheduleId: row.id,
    versionId: row.version_id,
    promoteAt: row.run_at,
    version: row.version_number,
    status: row.status,
    createdAt: row.created_at,
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
    ...(row.error === null ? {} : { error: row.error }),
  }
}
