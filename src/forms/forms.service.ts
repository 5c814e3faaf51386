/**
 * A site's forms and their submissions, as owners and editors read them: the forms of the live
 * version and any other with stored submissions, submissions newest first in pages, one by one,
 * as CSV, with their files; marking as spam, deleting one, all of a form's, or all a visitor sent
 * from one address; the site's form settings (who is e-mailed, how long submissions are kept)
 * and the sweep that applies the retention.
 */
import type { BlobStore } from '../blobs/blob-store.ts'
import { removeUnreferencedBlobs } from '../blobs/blob-removal.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { notFound, validationFailed } from '../core/errors.ts'
import { isFormName } from '../core/form-names.ts'
import { FORM_NOTIFY_MODES, type Role } from '../core/enums.ts'
import { FORM_NOTIFY_MAX_ADDRESSES, FORM_RETENTION_MAX_DAYS, FORM_SUBMISSIONS_PAGE_DEFAULT } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { FormFileRow, FormSubmissionRow } from '../db/types.ts'
import type { FormField } from '../publishing/form-declarations.ts'
import { isEmailAddress, normalizeEmail } from '../users/email-address.ts'
import { submissionsCsv } from './forms.csv.ts'
import type { FormsRepository } from './forms.repository.ts'
import type { FormList, FormSettings, FormSubmission, SubmissionList, SubmissionQuery } from './forms.schemas.ts'

export interface FormsServiceOptions {
  access: WebsiteAccess
  repo: FormsRepository
  blobs: BlobStore
  blobRows: BlobsRepository
  /** API origin: file URLs are under it. */
  baseUrl: string
  now: () => Date
}

const DAY_MS = 24 * 60 * 60 * 1000

export class FormsService {
  constructor(private readonly options: FormsServiceOptions) {}

  async listForms(principal: Principal, websiteId: string): Promise<FormList> {
    const { access, repo } = this.options
    const site = await access.requireSite(principal, websiteId, 'see')
    const [live, counts] = await Promise.all([repo.liveForms(site.id), repo.counts(site.id)])
    const liveNames = new Set(live.map((form) => form.name))
    const others = counts.map((c) => c.form).filter((name) => !liveNames.has(name))
    const otherFields = await repo.latestFields(site.id, others)
    const countOf = (name: string) => counts.find((c) => c.form === name)
    const summary = (name: string, fields: string | undefined, isLive: boolean) => ({
      name,
      fields: fields === undefined ? [] : (JSON.parse(fields) as FormField[]),
      live: isLive,
      submissions: countOf(name)?.submissions ?? 0,
      lastSubmissionAt: countOf(name)?.last ?? null,
    })
    return {
      items: [...live.map((form) => summary(form.name, form.fields, true)), ...others.sort().map((name) => summary(name, otherFields.get(name), false))],
    }
  }

  async listSubmissions(principal: Principal, websiteId: string, form: string, query: SubmissionQuery): Promise<SubmissionList> {
    const site = await this.site(principal, websiteId, form)
    const limit = query.limit ?? FORM_SUBMISSIONS_PAGE_DEFAULT
    const rows = await this.options.repo.page({
      websiteId: site.id,
      form,
      limit,
      after: query.cursor === undefined ? null : cursorOf(query.cursor),
      search: query.q ?? null,
    })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      items: await this.present(page),
      nextCursor: rows.length > limit && last ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url') : null,
    }
  }

  async getSubmission(principal: Principal, websiteId: string, form: string, submissionId: string): Promise<FormSubmission> {
    const site = await this.site(principal, websiteId, form)
    const row = await this.options.repo.find(site.id, form, submissionId)
    if (row === undefined) throw notFound('Submission')
    return (await this.present([row]))[0]!
  }

  async setSpam(principal: Principal, websiteId: string, form: string, submissionId: string, spam: boolean): Promise<void> {
    const site = await this.site(principal, websiteId, form)
    if (!(await this.options.repo.setSpam(site.id, form, submissionId, spam))) throw notFound('Submission')
  }

  async deleteSubmission(principal: Principal, websiteId: string, form: string, submissionId: string): Promise<void> {
    const site = await this.site(principal, websiteId, form)
    if ((await this.remove({ websiteId: site.id, form, ids: [submissionId] })) === 0) throw notFound('Submission')
  }

  /** Deletes every submission of a form: how many there were. */
  async deleteAll(principal: Principal, websiteId: string, form: string): Promise<{ deleted: number }> {
    const site = await this.site(principal, websiteId, form)
    return { deleted: await this.remove({ websiteId: site.id, form }) }
  }

  /** Deletes every submission of the site (any form) whose sender gave this address: a visitor's request to be forgotten. */
  async deleteByEmail(principal: Principal, websiteId: string, email: string): Promise<{ deleted: number }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'edit')
    const address = normalizeEmail(email)
    if (!isEmailAddress(address)) throw validationFailed({ email: 'must be an e-mail address' })
    return { deleted: await this.remove({ websiteId: site.id, email: address }) }
  }

  /** Every submission of a form as CSV, oldest first: one column per field, values that a spreadsheet would run as formulas neutralised. */
  async exportCsv(principal: Principal, websiteId: string, form: string): Promise<{ filename: string; csv: string }> {
    const site = await this.site(principal, websiteId, form)
    const rows = await this.options.repo.all(site.id, form)
    const fields = (await this.options.repo.latestFields(site.id, [form])).get(form)
    const declared = fields === undefined ? [] : (JSON.parse(fields) as FormField[]).map((field) => field.name)
    return { filename: `${site.slug}-${form}.csv`, csv: submissionsCsv(declared, await this.present(rows)) }
  }

  /** A file sent with a submission, for an owner or editor to download. */
  async file(
    principal: Principal,
    websiteId: string,
    form: string,
    submissionId: string,
    position: number,
  ): Promise<{ bytes: Buffer; filename: string; contentType: string }> {
    const site = await this.site(principal, websiteId, form)
    const row = await this.options.repo.find(site.id, form, submissionId)
    const file = row && (await this.options.repo.filesOf([row.id])).find((f) => f.position === position)
    if (!file) throw notFound('File')
    return { bytes: await this.options.blobs.get(file.hash), filename: file.filename, contentType: file.content_type }
  }

  async settings(principal: Principal, websiteId: string): Promise<FormSettings> {
    return (await this.settingsAndRole(principal, websiteId)).settings
  }

  /** The settings with the caller's role on the site: only an owner may change them. */
  async settingsAndRole(principal: Principal, websiteId: string): Promise<{ settings: FormSettings; role: Role }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const settings = (await this.options.repo.settingsOf(site.id))!
    return {
      settings: {
        notify: settings.notify === null ? null : (JSON.parse(settings.notify) as string[]),
        retentionDays: settings.retentionDays,
        notifyMode: settings.notifyMode,
      },
      role: site.role,
    }
  }

  /**
   * Sets who is e-mailed submissions, each or as a daily digest (unchanged when `notifyMode` is
   * left out), and how long submissions are kept (owner only); applies the retention at once.
   */
  async updateSettings(principal: Principal, websiteId: string, settings: FormSettings): Promise<FormSettings> {
    const site = await this.options.access.requireSite(principal, websiteId, 'own', 'change its form settings')
    const notify = settings.notify === null ? null : [...new Set(settings.notify.map(normalizeEmail))]
    checkSettings(notify, settings)
    const notifyMode = settings.notifyMode ?? (await this.options.repo.settingsOf(site.id))!.notifyMode
    await this.options.repo.setSettings(site.id, { notify: notify === null ? null : JSON.stringify(notify), retentionDays: settings.retentionDays, notifyMode })
    if (settings.retentionDays !== null) await this.expire(site.id, settings.retentionDays)
    return { notify, retentionDays: settings.retentionDays, notifyMode }
  }

  /** Deletes the submissions older than each site's retention: how many. */
  async sweepRetention(): Promise<number> {
    let deleted = 0
    for (const site of await this.options.repo.sitesWithRetention()) deleted += await this.expire(site.id, Number(site.days))
    return deleted
  }

  private expire(websiteId: string, days: number): Promise<number> {
    return this.remove({ websiteId, before: new Date(this.options.now().getTime() - days * DAY_MS).toISOString() })
  }

  /** Deletes submissions and then the blobs of their files that nothing else holds. */
  private async remove(filter: Parameters<FormsRepository['delete']>[0]): Promise<number> {
    const { count, hashes } = await this.options.repo.delete(filter)
    await removeUnreferencedBlobs(this.options.blobs, this.options.blobRows, hashes)
    return count
  }

  /** The site, for a form name that may name a form (any other is 404, as a form it never had). */
  private async site(principal: Principal, websiteId: string, form: string) {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    if (!isFormName(form)) throw notFound('Form')
    return site
  }

  private async present(rows: FormSubmissionRow[]): Promise<FormSubmission[]> {
    const files = await this.options.repo.filesOf(rows.map((row) => row.id))
    return rows.map((row) => ({
      id: row.id,
      form: row.form,
      createdAt: row.created_at,
      data: JSON.parse(row.data) as Record<string, string>,
      files: files.filter((file) => file.submission_id === row.id).map((file) => this.fileOf(row, file)),
      spam: Number(row.spam) === 1,
    }))
  }

  private fileOf(row: FormSubmissionRow, file: FormFileRow) {
    const url = `${this.options.baseUrl}/v1/websites/${row.website_id}/forms/${row.form}/submissions/${row.id}/files/${file.position}`
    return { field: file.field, filename: file.filename, contentType: file.content_type, size: file.size, url }
  }
}

/**
 * What the API's schema also bounds, checked here too for callers that build settings from a
 * page's fields: every address an address, at most FORM_NOTIFY_MAX_ADDRESSES of them, a whole
 * number of days in range, a known mode. Each problem is named by its field.
 */
function checkSettings(notify: string[] | null, settings: FormSettings): void {
  const fields: Record<string, string> = {}
  const bad = notify?.find((address) => !isEmailAddress(address))
  if (bad !== undefined) fields.notify = `holds ${JSON.stringify(bad.slice(0, 60))}, which is not an e-mail address`
  else if (notify !== null && notify.length > FORM_NOTIFY_MAX_ADDRESSES)
    fields.notify = `holds ${notify.length} addresses; at most ${FORM_NOTIFY_MAX_ADDRESSES}`
  const days = settings.retentionDays
  if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= FORM_RETENTION_MAX_DAYS)) {
    fields.retentionDays = `must be a whole number of days from 1 to ${FORM_RETENTION_MAX_DAYS}`
  }
  if (settings.notifyMode !== undefined && !FORM_NOTIFY_MODES.includes(settings.notifyMode)) fields.notifyMode = `must be ${FORM_NOTIFY_MODES.join(' or ')}`
  if (Object.keys(fields).length > 0) throw validationFailed(fields)
}

/** A cursor back to the position it names; anything else is VALIDATION_FAILED. */
function cursorOf(cursor: string): { createdAt: string; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') return { createdAt: value[0], id: value[1] }
  } catch {
    // Not JSON: told below.
  }
  throw validationFailed({ cursor: 'is not a cursor this listing gave' })
}
