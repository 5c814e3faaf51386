import { type Kysely, sql, type Transaction } from 'kysely'
import type { MemberRole, Role } from '../core/enums.ts'
import type { Warning } from '../core/schemas.ts'
import { type Executor, type SiteViewer, type VisibleWebsite, visibleWebsiteRows, visibleWebsites } from '../db/access.ts'
import type { Database, VersionFileRow, VersionRow, WebsiteRow } from '../db/types.ts'

export type { Executor }

export interface WebsiteListRow extends VisibleWebsite {
  latest_status: VersionRow['status'] | null
  /** Number of the live version; null while none is. */
  live_version: number | null
}

export interface VersionWithPublisherRow extends VersionRow {
  publisher_name: string | null
  publisher_email: string
}

export interface VisibleJobRow extends VersionWithPublisherRow {
  slug: string
  website_name: string
  current_version_id: string | null
}

export interface MemberRow {
  user_id: string
  email: string
  name: string | null
  role: Role
  added_at: string
}

/** Queries over websites, their members, versions and files. One query per method. */
export class WebsitesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work)
  }

  /** The sites the user sees, most recently updated first; only the one of `slug` when given. */
  listVisible(viewer: SiteViewer, limit: number, slug?: string): Promise<WebsiteListRow[]> {
    return visibleWebsiteRows(this.db, viewer)
      .$if(slug !== undefined, (query) => query.where('websites.slug', '=', slug!))
      .select((eb) =>
        eb
          .selectFrom('versions')
          .select('versions.status')
          .whereRef('versions.website_id', '=', 'websites.id')
          .orderBy('versions.number', 'desc')
          .limit(1)
          .as('latest_status'),
      )
      .select((eb) => eb.selectFrom('versions').select('versions.number').whereRef('versions.id', '=', 'websites.current_version_id').as('live_version'))
      .orderBy('websites.updated_at', 'desc')
      .orderBy('websites.id')
      .limit(limit)
      .execute()
  }

  /** A site's stored form submissions: all of them, and those that came since `since`. */
  async formSubmissionCounts(websiteId: string, since: string): Promise<{ total: number; recent: number }> {
    const row = await this.db
      .selectFrom('form_submissions')
      .select((eb) => [
        eb.fn.countAll<string | number>().as('total'),
        eb.fn.sum<string | number | null>(eb.case().when('created_at', '>=', since).then(1).else(0).end()).as('recent'),
      ])
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow()
    return { total: Number(row.total), recent: Number(row.recent ?? 0) }
  }

  /** The form submissions stored for every site a user owns. */
  async formSubmissionsOwned(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('form_submissions')
      .innerJoin('websites', 'websites.id', 'form_submissions.website_id')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('websites.owner_id', '=', userId)
      .where('websites.status', '!=', 'deleted')
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async countOwned(userId: string, db: Executor = this.db): Promise<number> {
    const row = await db
      .selectFrom('websites')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', userId)
      .where('status', '!=', 'deleted')
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async slugsStartingWith(prefix: string): Promise<Set<string>> {
    const rows = await this.db.selectFrom('websites').select('slug').where('slug', 'like', `${prefix}%`).execute()
    return new Set(rows.map((r) => r.slug))
  }

  async slugExists(slug: string): Promise<boolean> {
    return (await this.db.selectFrom('websites').select('id').where('slug', '=', slug).executeTakeFirst()) !== undefined
  }

  insertWebsite(
    trx: Executor,
    website: Omit<WebsiteRow, 'last_version_number' | 'password_hash' | 'password_set_at' | 'form_notify' | 'form_retention_days' | 'form_notify_mode'>,
  ): Promise<unknown> {
    return trx.insertInto('websites').values(website).execute()
  }

  /** Sets (a scrypt hash) or removes (null) a site's password; false when the site is gone. */
  async setPassword(websiteId: string, passwordHash: string | null, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('websites')
      .set({ password_hash: passwordHash, password_set_at: passwordHash === null ? null : at, updated_at: at })
      .where('id', '=', websiteId)
      .where('status', '!=', 'deleted')
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  /** A site's password hash and when it was set, for checking an unlock; undefined when the site is gone. */
  async passwordOf(websiteId: string): Promise<{ password_hash: string | null } | undefined> {
    return this.db.selectFrom('websites').select('password_hash').where('id', '=', websiteId).where('status', '!=', 'deleted').executeTakeFirst()
  }

  /**
   * Atomically hands out the next version number of a site (and locks its row on PostgreSQL);
   * undefined when the site is gone (deleted since the caller found it).
   */
  async nextVersionNumber(trx: Executor, websiteId: string): Promise<number | undefined> {
    const row = await trx
      .updateTable('websites')
      .set((eb) => ({ last_version_number: eb('last_version_number', '+', 1) }))
      .where('id', '=', websiteId)
      .returning('last_version_number')
      .executeTakeFirst()
    return row && Number(row.last_version_number)
  }

  insertVersion(trx: Executor, version: VersionRow): Promise<unknown> {
    return trx.insertInto('versions').values(version).execute()
  }

  insertVersionFiles(trx: Executor, files: VersionFileRow[]): Promise<unknown> {
    return trx.insertInto('version_files').values(files).execute()
  }

  /** The forms a version's pages declare (fields as JSON text). */
  insertVersionForms(trx: Executor, versionId: string, forms: ReadonlyArray<{ name: string; fields: unknown }>): Promise<unknown> {
    if (forms.length === 0) return Promise.resolve()
    return trx
      .insertInto('version_forms')
      .values(forms.map((form) => ({ version_id: versionId, name: form.name, fields: JSON.stringify(form.fields) })))
      .execute()
  }

  /** What the site check found in a version (JSON text, kept as it was given). */
  insertVersionWarnings(trx: Executor, versionId: string, warnings: readonly Warning[]): Promise<unknown> {
    return trx
      .insertInto('version_warnings')
      .values({ version_id: versionId, warnings: JSON.stringify(warnings) })
      .execute()
  }

  /** The warnings of the given versions, by version id; a version published before the site check has none. */
  async warningsOf(versionIds: string[]): Promise<Map<string, Warning[]>> {
    if (versionIds.length === 0) return new Map()
    const rows = await this.db.selectFrom('version_warnings').selectAll().where('version_id', 'in', versionIds).execute()
    return new Map(rows.map((row) => [row.version_id, JSON.parse(row.warnings) as Warning[]]))
  }

  setCurrentVersion(trx: Executor, websiteId: string, versionId: string, at: string): Promise<unknown> {
    return trx.updateTable('websites').set({ current_version_id: versionId, status: 'active', updated_at: at }).where('id', '=', websiteId).execute()
  }

  /** Records when a site last changed (a version stored without going live). */
  markUpdated(trx: Executor, websiteId: string, at: string): Promise<unknown> {
    return trx.updateTable('websites').set({ updated_at: at }).where('id', '=', websiteId).execute()
  }

  /**
   * Locks a site's row until the transaction ends, the row nextVersionNumber locks (a no-op write;
   * SQLite runs one transaction at a time anyway).
   */
  lockWebsite(trx: Executor, websiteId: string): Promise<unknown> {
    return trx
      .updateTable('websites')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', websiteId)
      .execute()
  }

  /** Versions of a site, newest first. */
  listVersions(websiteId: string): Promise<VersionRow[]> {
    return this.db.selectFrom('versions').selectAll().where('website_id', '=', websiteId).orderBy('number', 'desc').execute()
  }

  /** Versions of a site, newest first, each with the name and email of the user who published it. */
  listVersionsWithPublisher(websiteId: string): Promise<VersionWithPublisherRow[]> {
    return this.db
      .selectFrom('versions')
      .innerJoin('users', 'users.id', 'versions.created_by')
      .selectAll('versions')
      .select(['users.name as publisher_name', 'users.email as publisher_email'])
      .where('versions.website_id', '=', websiteId)
      .orderBy('versions.number', 'desc')
      .execute()
  }

  /** Up to `limit` versions of a site, newest first, older than version number `before` (keyset on the unique website and number). */
  versionsPage(websiteId: string, limit: number, before?: number): Promise<VersionRow[]> {
    let query = this.db.selectFrom('versions').selectAll().where('website_id', '=', websiteId)
    if (before !== undefined) query = query.where('number', '<', before)
    return query.orderBy('number', 'desc').limit(limit).execute()
  }

  findVersion(websiteId: string, versionId: string): Promise<VersionRow | undefined> {
    return this.db.selectFrom('versions').selectAll().where('website_id', '=', websiteId).where('id', '=', versionId).executeTakeFirst()
  }

  findVersionByNumber(websiteId: string, number: number): Promise<VersionRow | undefined> {
    return this.db.selectFrom('versions').selectAll().where('website_id', '=', websiteId).where('number', '=', number).executeTakeFirst()
  }

  /** A job (version) with its website and who published it, if the user owns or edits that website. */
  findVisibleJob(viewer: SiteViewer, jobId: string): Promise<VisibleJobRow | undefined> {
    return visibleWebsites(this.db, viewer)
      .innerJoin('versions', 'versions.website_id', 'websites.id')
      .innerJoin('users', 'users.id', 'versions.created_by')
      .where('versions.id', '=', jobId)
      .selectAll('versions')
      .select([
        'websites.slug',
        'websites.name as website_name',
        'websites.current_version_id',
        'users.name as publisher_name',
        'users.email as publisher_email',
      ])
      .executeTakeFirst()
  }

  /** File metadata of the given versions, in path order. */
  filesOf(versionIds: string[]): Promise<VersionFileRow[]> {
    if (versionIds.length === 0) return Promise.resolve([])
    return this.db.selectFrom('version_files').selectAll().where('version_id', 'in', versionIds).orderBy('version_id').orderBy('path').execute()
  }

  /** How many versions the user published since the given instant, and the oldest of them. */
  async publishesSince(userId: string, since: string, db: Executor = this.db): Promise<{ count: number; oldest: string | null }> {
    const row = await db
      .selectFrom('versions')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('created_by', '=', userId)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow()
    return { count: Number(row.n), oldest: row.oldest ?? null }
  }

  /**
   * Locks the user's row until the transaction ends, so that one user's publishes are checked
   * against the limits one at a time (a no-op write; SQLite runs one transaction at a time anyway).
   */
  lockUser(trx: Executor, userId: string): Promise<unknown> {
    return trx
      .updateTable('users')
      .set((eb) => ({ name: eb.ref('name') }))
      .where('id', '=', userId)
      .execute()
  }

  upsertMember(websiteId: string, userId: string, role: MemberRole, at: string): Promise<unknown> {
    return this.db
      .insertInto('website_members')
      .values({ website_id: websiteId, user_id: userId, role, created_at: at })
      .onConflict((oc) => oc.columns(['website_id', 'user_id']).doUpdateSet({ role }))
      .execute()
  }

  findById(websiteId: string): Promise<WebsiteRow | undefined> {
    return this.db.selectFrom('websites').selectAll().where('id', '=', websiteId).executeTakeFirst()
  }

  /** The owner, then the editors in the order they were added, each with their account's name and email. */
  listMembers(websiteId: string): Promise<MemberRow[]> {
    const owner = this.db
      .selectFrom('websites')
      .innerJoin('users', 'users.id', 'websites.owner_id')
      .select([
        'users.id as user_id',
        'users.email',
        'users.name',
        sql.lit('owner').$castTo<Role>().as('role'),
        'websites.created_at as added_at',
        sql.lit(0).as('rank'),
      ])
      .where('websites.id', '=', websiteId)
    const editors = this.db
      .selectFrom('website_members')
      .innerJoin('users', 'users.id', 'website_members.user_id')
      .select(['users.id as user_id', 'users.email', 'users.name', 'website_members.role', 'website_members.created_at as added_at', sql.lit(1).as('rank')])
      .where('website_members.website_id', '=', websiteId)
    // Editors added in the same millisecond are listed by email, so the order never depends on random ids.
    return owner.unionAll(editors).orderBy('rank').orderBy('added_at').orderBy('email').execute()
  }

  /** Whether an editor was removed (false when the user was no member). */
  async deleteMember(websiteId: string, userId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('website_members').where('website_id', '=', websiteId).where('user_id', '=', userId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /** The account with this (normalized) email, as sharing a site needs it. */
  findUserByEmail(email: string): Promise<{ id: string; email: string } | undefined> {
    return this.db.selectFrom('users').select(['id', 'email']).where('email', '=', email).executeTakeFirst()
  }

  /** Every blob a site holds: the files of all its versions and drafts, its library images and the files sent with its forms. */
  async blobHashesOf(trx: Executor, websiteId: string): Promise<string[]> {
    const rows = await trx
      .selectFrom('version_files')
      .innerJoin('versions', 'versions.id', 'version_files.version_id')
      .select('version_files.hash')
      .where('versions.website_id', '=', websiteId)
      .union(
        trx
          .selectFrom('draft_files')
          .innerJoin('drafts', 'drafts.id', 'draft_files.draft_id')
          .select('draft_files.hash')
          .where('drafts.website_id', '=', websiteId),
      )
      .union(trx.selectFrom('assets').select('hash').where('website_id', '=', websiteId))
      .union(
        trx
          .selectFrom('form_files')
          .innerJoin('form_submissions', 'form_submissions.id', 'form_files.submission_id')
          .select('form_files.hash')
          .where('form_submissions.website_id', '=', websiteId),
      )
      .execute()
    return rows.map((r) => r.hash)
  }

  /**
   * Deletes a website and everything that hangs off it: the migrations declare ON DELETE CASCADE
   * from websites to its members, versions (and their files), drafts (and their files),
   * collections (and their entries) and library images. False when there was no such website.
   */
  async deleteWebsite(trx: Executor, websiteId: string): Promise<boolean> {
    const result = await trx.deleteFrom('websites').where('id', '=', websiteId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }
}
