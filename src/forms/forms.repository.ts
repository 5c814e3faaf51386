/** Forms' rows: what versions declare, what visitors sent, and the files that came with it. */
import { type Kysely, sql } from 'kysely'
import type { FormNotifyMode } from '../core/enums.ts'
import type { Database, FormFileRow, FormSubmissionRow } from '../db/types.ts'

export type Executor = Kysely<Database>

/** A page of a form's submissions: newest first, after a (created_at, id) position. */
export interface SubmissionQuery {
  websiteId: string
  form: string
  limit: number
  after: { createdAt: string; id: string } | null
  /** Text the data must hold (compared lowercased), or null. */
  search: string | null
}

/** LIKE's special characters taken literally, escaped with `\`. */
const likePattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export class FormsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  transaction<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work)
  }

  /** The fields (JSON text) of a form a version declares, undefined when it declares none of that name. */
  async declaredFields(versionId: string, form: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('version_forms').select('fields').where('version_id', '=', versionId).where('name', '=', form).executeTakeFirst()
    return row?.fields
  }

  /** The forms of a site's live version, with their fields (JSON text). */
  liveForms(websiteId: string): Promise<Array<{ name: string; fields: string }>> {
    return this.db
      .selectFrom('version_forms')
      .innerJoin('websites', 'websites.current_version_id', 'version_forms.version_id')
      .select(['version_forms.name', 'version_forms.fields'])
      .where('websites.id', '=', websiteId)
      .orderBy('version_forms.name')
      .execute()
  }

  /** The newest fields any version of the site declared for each of these forms. */
  async latestFields(websiteId: string, forms: string[]): Promise<Map<string, string>> {
    if (forms.length === 0) return new Map()
    const rows = await this.db
      .selectFrom('version_forms')
      .innerJoin('versions', 'versions.id', 'version_forms.version_id')
      .select(['version_forms.name', 'version_forms.fields', 'versions.number'])
      .where('versions.website_id', '=', websiteId)
      .where('version_forms.name', 'in', forms)
      .orderBy('versions.number', 'desc')
      .execute()
    const latest = new Map<string, string>()
    for (const row of rows) if (!latest.has(row.name)) latest.set(row.name, row.fields)
    return latest
  }

  /** Per form of the site that has submissions: how many, and when the last came. */
  async counts(websiteId: string): Promise<Array<{ form: string; submissions: number; last: string }>> {
    const rows = await this.db
      .selectFrom('form_submissions')
      .select(['form', (eb) => eb.fn.countAll<string | number>().as('submissions'), (eb) => eb.fn.max('created_at').as('last')])
      .where('website_id', '=', websiteId)
      .groupBy('form')
      .execute()
    return rows.map((row) => ({ form: row.form, submissions: Number(row.submissions), last: row.last }))
  }

  async insert(trx: Executor, submission: Omit<FormSubmissionRow, 'spam'>, files: FormFileRow[]): Promise<void> {
    await trx.insertInto('form_submissions').values(submission).execute()
    if (files.length > 0) await trx.insertInto('form_files').values(files).execute()
  }

  /** A page of submissions, newest first; one more than `limit` tells there is a next page. */
  page(query: SubmissionQuery): Promise<FormSubmissionRow[]> {
    let select = this.db
      .selectFrom('form_submissions')
      .selectAll()
      .where('website_id', '=', query.websiteId)
      .where('form', '=', query.form)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
    const after = query.after
    if (after !== null) {
      select = select.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]))
    }
    if (query.search !== null) select = select.where(sql<boolean>`lower(data) like ${likePattern(query.search)} escape '\\'`)
    return select.execute()
  }

  /** Every submission of a form, oldest first (a CSV export). */
  all(websiteId: string, form: string): Promise<FormSubmissionRow[]> {
    return this.db
      .selectFrom('form_submissions')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('form', '=', form)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  }

  find(websiteId: string, form: string, id: string): Promise<FormSubmissionRow | undefined> {
    return this.db
      .selectFrom('form_submissions')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('form', '=', form)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** The files of these submissions, in their order. */
  async filesOf(ids: string[]): Promise<FormFileRow[]> {
    if (ids.length === 0) return []
    const rows = await this.db.selectFrom('form_files').selectAll().where('submission_id', 'in', ids).orderBy('submission_id').orderBy('position').execute()
    return rows.map((row) => ({ ...row, size: Number(row.size), position: Number(row.position) }))
  }

  async setSpam(websiteId: string, form: string, id: string, spam: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('form_submissions')
      .set({ spam: spam ? 1 : 0 })
      .where('website_id', '=', websiteId)
      .where('form', '=', form)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  /**
   * Deletes the submissions a filter picks and answers the hashes of the files they held, whose
   * blobs may then go. `ids` null: every submission of the form (or of the site when `form` is null).
   */
  async delete(filter: {
    websiteId: string
    form?: string | null
    ids?: string[] | null
    email?: string
    before?: string
  }): Promise<{ count: number; hashes: string[] }> {
    return this.transaction(async (trx) => {
      let chosen = trx.selectFrom('form_submissions').select('id').where('website_id', '=', filter.websiteId)
      if (filter.form != null) chosen = chosen.where('form', '=', filter.form)
      if (filter.ids != null) chosen = chosen.where('id', 'in', filter.ids.length > 0 ? filter.ids : [''])
      if (filter.email !== undefined) chosen = chosen.where('email', '=', filter.email)
      if (filter.before !== undefined) chosen = chosen.where('created_at', '<', filter.before)
      const ids = (await chosen.execute()).map((row) => row.id)
      if (ids.length === 0) return { count: 0, hashes: [] }
      const files = await trx.selectFrom('form_files').select('hash').where('submission_id', 'in', ids).execute()
      await trx.deleteFrom('form_files').where('submission_id', 'in', ids).execute()
      await trx.deleteFrom('form_submissions').where('id', 'in', ids).execute()
      return { count: ids.length, hashes: files.map((file) => file.hash) }
    })
  }

  /** Sites that keep submissions for a number of days. */
  sitesWithRetention(): Promise<Array<{ id: string; days: number }>> {
    return this.db.selectFrom('websites').select(['id', 'form_retention_days as days']).where('form_retention_days', 'is not', null).execute() as Promise<
      Array<{ id: string; days: number }>
    >
  }

  /** A site's form settings and its owner's address. */
  async settingsOf(
    websiteId: string,
  ): Promise<{ name: string; notify: string | null; retentionDays: number | null; notifyMode: FormNotifyMode; ownerEmail: string } | undefined> {
    const row = await this.db
      .selectFrom('websites')
      .innerJoin('users', 'users.id', 'websites.owner_id')
      .select([
        'websites.name',
        'websites.form_notify as notify',
        'websites.form_retention_days as retentionDays',
        'websites.form_notify_mode as notifyMode',
        'users.email as ownerEmail',
      ])
      .where('websites.id', '=', websiteId)
      .executeTakeFirst()
    return row && { ...row, notifyMode: row.notifyMode === 'daily' ? 'daily' : 'each' }
  }

  async setSettings(websiteId: string, settings: { notify: string | null; retentionDays: number | null; notifyMode: FormNotifyMode }): Promise<void> {
    await this.db
      .updateTable('websites')
      .set({ form_notify: settings.notify, form_retention_days: settings.retentionDays, form_notify_mode: settings.notifyMode })
      .where('id', '=', websiteId)
      .execute()
  }
}
