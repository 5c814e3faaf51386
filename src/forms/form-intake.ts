/**
 * Taking a visitor's post to a site's form (the site server's FormReceiver): counted against the
 * rate limits before its body is read, then checked (the fields the version marks required are
 * there), stored (its files as blobs, the submission and its file rows in one transaction) and told
 * to whoever is notified. A post that fills the honeypot is answered like any other and stores
 * nothing. Controls (`_next`, `_gotcha`) are never stored.
 *
 * Each stored submission records the webhook event `form.submitted` in its own transaction, with
 * `data` `{form, submissionId, versionId, createdAt, fields, files}`: `fields` the answers as
 * stored (field to value), `files` each file's `field`, `filename`, `contentType` and `size` (never
 * its bytes: owners download them with a token). A post the honeypot drops stores nothing and so
 * records no event; marking a submission as spam later sends none either.
 */
import { createHash } from 'node:crypto'
import type { BlobStore } from '../blobs/blob-store.ts'
import type { BlobVariants } from '../blobs/blob-variants.ts'
import { storeBlob } from '../blobs/blob-writes.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { AppError, validationFailed } from '../core/errors.ts'
import { CONTROL_FIELD_PREFIX, HONEYPOT_FIELD } from '../core/form-names.ts'
import { newId, nowIso } from '../core/ids.ts'
import { CONTENT_TYPE_MAX_CHARS, UPLOAD_FILENAME_MAX_CHARS } from '../core/limits.ts'
import type { FormFileRow } from '../db/types.ts'
import type { FormField } from '../publishing/form-declarations.ts'
import type { FormPost, FormReceiver } from '../serving/form-posts.ts'
import { isEmailAddress, normalizeEmail } from '../users/email-address.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { FormThrottle } from './form-throttle.ts'
import type { FormsRepository } from './forms.repository.ts'

/** A stored submission, as those who are told of it see it. */
export interface SubmissionNotice {
  websiteId: string
  form: string
  submissionId: string
  createdAt: string
  data: Record<string, string>
  files: Array<{ field: string; filename: string; size: number }>
  /** The sender's validated address, or null. */
  email: string | null
}

/** Whoever is told of each stored submission (e-mail, when configured). Never waited for by the visitor. */
export interface SubmissionNotices {
  submitted(notice: SubmissionNotice): void
}

export interface FormIntakeOptions {
  repo: FormsRepository
  throttle: FormThrottle
  blobs: BlobStore
  blobRows: BlobsRepository
  variants: BlobVariants
  webhookEvents: WebhookEvents
  notices: SubmissionNotices
}

/** Fields that give the sender's address, in the order they are looked at (then any field the form declares as `email`). */
const EMAIL_FIELDS = ['email', 'e-mail', 'mail', 'replyto', '_replyto']

export class FormIntake implements FormReceiver {
  constructor(private readonly options: FormIntakeOptions) {}

  admit(websiteId: string, address: string): number | null {
    return this.options.throttle.admit(websiteId, address)
  }

  async declaration(versionId: string, form: string): Promise<readonly FormField[] | undefined> {
    const declared = await this.options.repo.declaredFields(versionId, form)
    return declared === undefined ? undefined : (JSON.parse(declared) as FormField[])
  }

  async receive(post: FormPost): Promise<{ submissionId: string }> {
    const submissionId = newId('sub')
    if (post.fields.some(([name, value]) => name === HONEYPOT_FIELD && value !== '')) return { submissionId }
    const fields = post.declared
    const data = dataOf(post.fields)
    const missing = fields.filter(
      (field) => field.required && (field.type === 'file' ? !post.files.some((f) => f.field === field.name) : !answerOf(data, field.name)?.trim()),
    )
    if (missing.length > 0) throw validationFailed(Object.fromEntries(missing.map((field) => [field.name, 'is required'])))
    if (Object.keys(data).length === 0 && post.files.length === 0) throw new AppError('VALIDATION_FAILED', 'The form was sent empty.')
    const email = senderOf(data, fields)
    const createdAt = nowIso()
    const files: FormFileRow[] = []
    for (const [position, file] of post.files.entries()) {
      const hash = createHash('sha256').update(file.bytes).digest('hex')
      const contentType = file.contentType.slice(0, CONTENT_TYPE_MAX_CHARS)
      // Stored as bytes to download, never served on the site: the type is the one the browser gave.
      await storeBlob(this.options.blobs, this.options.blobRows, this.options.variants, hash, file.bytes, 'application/octet-stream')
      files.push({
        submission_id: submissionId,
        position,
        field: file.field,
        filename: file.filename.slice(0, UPLOAD_FILENAME_MAX_CHARS),
        content_type: contentType,
        size: file.bytes.length,
        hash,
      })
    }
    const { repo, webhookEvents } = this.options
    await repo.transaction(async (trx) => {
      await repo.insert(
        trx,
        { id: submissionId, website_id: post.websiteId, form: post.form, version_id: post.versionId, created_at: createdAt, data: JSON.stringify(data), email },
        files,
      )
      await webhookEvents.emit(trx, post.websiteId, 'form.submitted', {
        form: post.form,
        submissionId,
        versionId: post.versionId,
        createdAt,
        fields: data,
        files: files.map((f) => ({ field: f.field, filename: f.filename, contentType: f.content_type, size: f.size })),
      })
    })
    this.options.notices.submitted({
      websiteId: post.websiteId,
      form: post.form,
      submissionId,
      createdAt,
      data,
      files: files.map((f) => ({ field: f.field, filename: f.filename, size: f.size })),
      email,
    })
    return { submissionId }
  }
}

/** The answers of a post, controls left out; a field sent more than once (checkboxes) has its values joined. */
function dataOf(fields: ReadonlyArray<[string, string]>): Record<string, string> {
  const data: Record<string, string> = Object.create(null) as Record<string, string>
  for (const [name, value] of fields) {
    if (name === '' || name.startsWith(CONTROL_FIELD_PREFIX)) continue
    data[name] = name in data ? `${data[name]}, ${value}` : value
  }
  return { ...data }
}

/** The sender's address: the first field named like one (or declared `type=email`) whose value is a valid address. */
function senderOf(data: Record<string, string>, fields: readonly FormField[]): string | null {
  const names = [...EMAIL_FIELDS, ...fields.filter((field) => field.type === 'email').map((field) => field.name)]
  for (const name of names) {
    const value = answerOf(data, name)
    if (value === undefined) continue
    const email = normalizeEmail(value)
    if (isEmailAddress(email)) return email
  }
  return null
}

/** The answer given for a field, undefined when none was (never an inherited property). */
const answerOf = (data: Record<string, string>, name: string): string | undefined => (Object.hasOwn(data, name) ? data[name] : undefined)
