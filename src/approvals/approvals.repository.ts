/** The rows of promotion requests and schedules, and the claim that lets one instance run a due schedule. */
import type { Kysely, Selectable } from 'kysely'
import type { PromotionRequestStatus } from '../core/enums.ts'
import type { Executor } from '../db/access.ts'
import type { Database, PromotionRequestsTable, SchedulesTable } from '../db/types.ts'

export type PromotionRequestRow = Selectable<PromotionRequestsTable> & { version_number: number }
export type ScheduleRow = Selectable<SchedulesTable> & { version_number: number }

/** Requests and schedules listed per site at most: the newest. */
export const LISTED_PER_SITE = 100

export class ApprovalsRepository {
  constructor(readonly db: Kysely<Database>) {}

  transaction<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work)
  }

  async insertRequest(db: Executor, row: Selectable<PromotionRequestsTable>): Promise<void> {
    await db.insertInto('promotion_requests').values(row).execute()
  }

  private requests(db: Executor = this.db) {
    return db.selectFrom('promotion_requests as r').innerJoin('versions as v', 'v.id', 'r.version_id').selectAll('r').select('v.number as version_number')
  }

  async findRequest(websiteId: string, requestId: string): Promise<PromotionRequestRow | undefined> {
    const row = await this.requests().where('r.website_id', '=', websiteId).where('r.id', '=', requestId).executeTakeFirst()
    return row && { ...row, version_number: Number(row.version_number) }
  }

  async pendingFor(db: Executor, websiteId: string, versionId: string): Promise<PromotionRequestRow | undefined> {
    const row = await this.requests(db)
      .where('r.website_id', '=', websiteId)
      .where('r.version_id', '=', versionId)
      .where('r.status', '=', 'pending')
      .executeTakeFirst()
    return row && { ...row, version_number: Number(row.version_number) }
  }

  /** A site's requests, newest first; only the pending ones when `status` says so. */
  async listRequests(websiteId: string, status?: PromotionRequestStatus): Promise<PromotionRequestRow[]> {
    let query = this.requests().where('r.website_id', '=', websiteId)
    if (status) query = query.where('r.status', '=', status)
    const rows = await query.orderBy('r.created_at', 'desc').orderBy('r.id').limit(LISTED_PER_SITE).execute()
    return rows.map((row) => ({ ...row, version_number: Number(row.version_number) }))
  }

  /** Moves a pending request to `status`: false when it was no longer pending (decided by someone else). */
  async decide(
    db: Executor,
    requestId: string,
    outcome: { status: Exclude<PromotionRequestStatus, 'pending'>; decided_by: string; decided_at: string; reason: string | null },
  ): Promise<boolean> {
    const result = await db.updateTable('promotion_requests').set(outcome).where('id', '=', requestId).where('status', '=', 'pending').executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Gives an approval back (its promotion failed): pending again. */
  async reopen(requestId: string): Promise<void> {
    await this.db
      .updateTable('promotion_requests')
      .set({ status: 'pending', decided_by: null, decided_at: null, reason: null })
      .where('id', '=', requestId)
      .execute()
  }

  /** Who is told of a site's requests: its owner and its editors. */
  async peopleOf(websiteId: string): Promise<string[]> {
    const owner = await this.db
      .selectFrom('websites')
      .innerJoin('users', 'users.id', 'websites.owner_id')
      .select('users.email')
      .where('websites.id', '=', websiteId)
      .execute()
    const editors = await this.db
      .selectFrom('website_members')
      .innerJoin('users', 'users.id', 'website_members.user_id')
      .select('users.email')
      .where('website_members.website_id', '=', websiteId)
      .execute()
    return [...new Set([...owner, ...editors].map((row) => row.email))]
  }

  async userOf(userId: string): Promise<{ id: string; email: string; name: string | null } | undefined> {
    return this.db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', userId).executeTakeFirst()
  }

  async insertSchedule(row: Selectable<SchedulesTable>): Promise<void> {
    await this.db.insertInto('schedules').values(row).execute()
  }

  private schedules() {
    return this.db.selectFrom('schedules as s').innerJoin('versions as v', 'v.id', 's.version_id').selectAll('s').select('v.number as version_number')
  }

  async findSchedule(websiteId: string, scheduleId: string): Promise<ScheduleRow | undefined> {
    const row = await this.schedules().where('s.website_id', '=', websiteId).where('s.id', '=', scheduleId).executeTakeFirst()
    return row && { ...row, version_number: Number(row.version_number) }
  }

  /** A site's schedules: those still to run first, by time, then the latest ones run, failed or cancelled. */
  async listSchedules(websiteId: string): Promise<ScheduleRow[]> {
    const rows = await this.schedules().where('s.website_id', '=', websiteId).orderBy('s.run_at', 'desc').orderBy('s.id').limit(LISTED_PER_SITE).execute()
    return rows.map((row) => ({ ...row, version_number: Number(row.version_number) }))
  }

  /** Cancels a schedule that has not started: false when it already ran, runs or was cancelled. */
  async cancel(scheduleId: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('schedules')
      .set({ status: 'cancelled', finished_at: at })
      .where('id', '=', scheduleId)
      .where('status', '=', 'pending')
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Ids of schedules due at `now`: pending ones whose time came, and running ones whose instance's lease ran out. */
  async dueIds(now: string, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('schedules')
      .select('id')
      .where((eb) =>
        eb.or([eb.and([eb('status', '=', 'pending'), eb('run_at', '<=', now)]), eb.and([eb('status', '=', 'running'), eb('claimed_until', '<', now)])]),
      )
      .orderBy('run_at')
      .limit(limit)
      .execute()
    return rows.map((row) => row.id)
  }

  /**
   * Claims one due schedule for `claim` until `until`: one conditional UPDATE, so of instances
   * claiming at once exactly one changes the row and the others change none. The row as claimed, or
   * undefined when another instance had it.
   */
  async claim(scheduleId: string, claim: string, now: string, until: string): Promise<ScheduleRow | undefined> {
    const result = await this.db
      .updateTable('schedules')
      .set({ status: 'running', claim, claimed_until: until })
      .where('id', '=', scheduleId)
      .where((eb) =>
        eb.or([eb.and([eb('status', '=', 'pending'), eb('run_at', '<=', now)]), eb.and([eb('status', '=', 'running'), eb('claimed_until', '<', now)])]),
      )
      .executeTakeFirst()
    if (Number(result.numUpdatedRows) !== 1) return undefined
    const row = await this.schedules().where('s.id', '=', scheduleId).where('s.claim', '=', claim).executeTakeFirst()
    return row && { ...row, version_number: Number(row.version_number) }
  }

  /** Records how a claimed schedule ended. */
  async finish(scheduleId: string, claim: string, outcome: { status: 'done' | 'failed'; finished_at: string; error: string | null }): Promise<void> {
    await this.db
      .updateTable('schedules')
      .set({ ...outcome, claimed_until: null })
      .where('id', '=', scheduleId)
      .where('claim', '=', claim)
      .execute()
  }

  /** Sets (or with null clears) when a version stops being served at its preview host. */
  async setPreviewExpiry(websiteId: string, versionId: string, expiresAt: string | null): Promise<void> {
    await this.db.updateTable('versions').set({ preview_expires_at: expiresAt }).where('website_id', '=', websiteId).where('id', '=', versionId).execute()
  }
}
