/**
 * Form posts on a site's host: `POST /_forms/{name}`. Guarded before any byte of the body is read
 * (the served version must declare the form, the site and the client address must be under their
 * rate limits, the body must be a form of a size that can fit), then parsed as it streams in by
 * busboy (urlencoded or multipart) within the submission limits, and handed to the forms feature
 * through the FormReceiver port. The answer is a 303 to the form's `_next` (a path of this site)
 * or to a thank-you page, or JSON when the request asks for it.
 *
 * A draft's preview takes no posts: its pages are unpublished work, not a version whose forms are
 * recorded, so a post there is 405 (Allow: GET, HEAD) with a page or JSON saying where forms are
 * taken. A version's preview host takes posts to the forms of the version it serves.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import busboy from 'busboy'
import { AppError, validationFailed } from '../core/errors.ts'
import { FORM_PATH_PREFIX, NEXT_FIELD } from '../core/form-names.ts'
import { FORM_BODY_MAX_BYTES, FORM_BODY_SECONDS, FORM_SUBMISSION_LIMITS, formatSize } from '../core/limits.ts'
import { parseDraftLabel, safeReturnPath } from '../core/site-address.ts'
import { statusOf } from '../http/error-status.ts'
import type { FormField } from '../publishing/form-declarations.ts'
import { builtin, htmlPage, sendPage } from './security-headers.ts'
import type { PreparedVersion } from './site-version.ts'
import { UNLOCK_PATH } from './site-lock.ts'

/** A file sent with a form post, read into memory (within FORM_SUBMISSION_LIMITS). */
export interface PostedFile {
  field: string
  filename: string
  contentType: string
  bytes: Buffer
}

/** A form post as the forms feature takes it: every field in order, controls included. */
export interface FormPost {
  websiteId: string
  versionId: string
  form: string
  /** The fields the version's form declares (FormReceiver.declaration), read before the body. */
  declared: readonly FormField[]
  fields: Array<[string, string]>
  files: PostedFile[]
  clientAddress: string
}

/** The forms feature, as serving needs it (forms/form-intake.ts). */
export interface FormReceiver {
  /** Null when a post from `address` to the site may be taken now, else the seconds to wait (it is counted when taken). */
  admit(websiteId: string, address: string): number | null
  /** The fields the version's form declares; undefined when the version declares no such form. */
  declaration(versionId: string, form: string): Promise<readonly FormField[] | undefined>
  /** Stores the post (or, for the honeypot, pretends to): its submission id. Throws AppError for a post it refuses. */
  receive(post: FormPost): Promise<{ submissionId: string }>
}

const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data']
const THANKS_SUFFIX = '/thanks'
const SITE_THANKS_FILE = 'thanks.html'

/** The form a GET path shows the thank-you page of (`/_forms/{name}/thanks`), null for any other path. */
export function thanksPageOf(path: string): string | null {
  if (!path.startsWith(FORM_PATH_PREFIX) || !path.endsWith(THANKS_SUFFIX)) return null
  return path.slice(FORM_PATH_PREFIX.length, -THANKS_SUFFIX.length)
}

/** The built-in thank-you page, for a form of a site that has no thanks.html. */
export const THANKS_PAGE = builtin(
  200,
  'text/html; charset=utf-8',
  htmlPage('Thank you', 'Your message was sent.', 'You can go back to the site now.').replace('</body>', '<p><a href="/">Back to the site</a></p></body>'),
)

export class FormPosts {
  constructor(
    private readonly receiver: FormReceiver,
    private readonly clientAddress: (req: IncomingMessage) => string,
  ) {}

  /**
   * Answers a form post to a protected site the visitor has not unlocked, unread: a script asking
   * for JSON gets the envelope (401 AUTH_REQUIRED); false for a browser's post, which gets the
   * password page as any request does.
   */
  lockedAnswer(req: IncomingMessage, res: ServerResponse): boolean {
    if (!wantsJson(req)) return false
    refuse(req, res, true, new AppError('AUTH_REQUIRED', `This site is protected by a password: unlock it (POST ${UNLOCK_PATH}) before posting its forms.`))
    return true
  }

  /** Answers a POST to `/_forms/{name}` (name as given, not yet checked) on a host serving `version`. */
  async post(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, name: string): Promise<void> {
    const json = wantsJson(req)
    if (parseDraftLabel(version.label) !== null) return refuse(req, res, json, DRAFT_POST)
    if (!version.forms.has(name)) return refuse(req, res, json, new AppError('NOT_FOUND', 'This site has no such form.'))
    const address = this.clientAddress(req)
    const wait = this.receiver.admit(version.websiteId, address)
    if (wait !== null) {
      const error = new AppError('RATE_LIMITED', `Too many submissions: try again in ${wait} seconds.`, { retryAfterSeconds: wait })
      return refuse(req, res, json, error)
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
    if (!FORM_TYPES.includes(type)) {
      return refuse(req, res, json, new AppError('UNSUPPORTED_MEDIA_TYPE', `A form is posted as ${FORM_TYPES.join(' or ')}.`))
    }
    const length = Number(req.headers['content-length'])
    if (Number.isFinite(length) && length > FORM_BODY_MAX_BYTES) return refuse(req, res, json, tooLarge(`the body is over ${formatSize(FORM_BODY_MAX_BYTES)}`))
    const declared = await this.receiver.declaration(version.versionId, name)
    // A version deleted since it was served declares nothing.
    if (declared === undefined) return refuse(req, res, json, new AppError('NOT_FOUND', 'This site has no such form.'))
    const fileFields = new Set(declared.filter((field) => field.type === 'file').map((field) => field.name))
    let parsed: { fields: Array<[string, string]>; files: PostedFile[] }
    try {
      parsed = await readForm(req, fileFields)
    } catch (error) {
      if (error instanceof AppError) return refuse(req, res, json, error)
      throw error
    }
    let submissionId: string
    try {
      ;({ submissionId } = await this.receiver.receive({
        websiteId: version.websiteId,
        versionId: version.versionId,
        form: name,
        declared,
        ...parsed,
        clientAddress: address,
      }))
    } catch (error) {
      if (error instanceof AppError) return refuse(req, res, json, error)
      throw error
    }
    if (json) {
      const body = JSON.stringify({ submissionId })
      res.writeHead(201, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' })
      res.end(body)
      return
    }
    const next = safeReturnPath(parsed.fields.find(([field]) => field === NEXT_FIELD)?.[1])
    const thanks = version.files.has(SITE_THANKS_FILE) ? `/${SITE_THANKS_FILE}` : `${FORM_PATH_PREFIX}${name}${THANKS_SUFFIX}`
    res.writeHead(303, { Location: next ?? thanks, 'Content-Length': '0', 'Cache-Control': 'no-store' })
    res.end()
  }
}

const DRAFT_POST = new AppError(
  'METHOD_NOT_ALLOWED',
  "A draft's preview takes no form posts: forms take them on the published site and on a published version's preview.",
)

const wantsJson = (req: IncomingMessage): boolean => /\bapplication\/json\b/i.test(req.headers.accept ?? '')

const tooLarge = (what: string) => new AppError('PAYLOAD_TOO_LARGE', `The form is too large: ${what}.`)
const tooMany = (field: string, what: string) => new AppError('VALIDATION_FAILED', `The form has ${what}.`, { fields: { [field]: what } })

/**
 * Answers a refused post, as JSON or as a small page, and stops reading its body: the connection
 * is closed once the answer is sent, so a client still sending is not read to its end.
 */
function refuse(req: IncomingMessage, res: ServerResponse, json: boolean, error: AppError): void {
  const status = statusOf(error)
  const extra = error.retryAfterSeconds === undefined ? [] : ['Retry-After', String(error.retryAfterSeconds)]
  if (status === 405) extra.push('Allow', 'GET, HEAD')
  if (!req.complete) extra.push('Connection', 'close')
  const page = json
    ? builtin(status, 'application/json; charset=utf-8', JSON.stringify(error.toEnvelope()), extra)
    : builtin(
        status,
        'text/html; charset=utf-8',
        htmlPage(status === 404 ? 'Form not found' : status === 405 ? 'Forms are not taken here' : 'The form was not sent', error.message),
        extra,
      )
  req.unpipe()
  req.resume()
  sendPage(res, page, false)
}

/**
 * The fields and files of a form body, within FORM_SUBMISSION_LIMITS and FORM_BODY_SECONDS, files
 * only for the form's file inputs (`fileFields`); AppError for one over them, refused as soon as
 * it is (the rest of the body is not kept).
 */
function readForm(req: IncomingMessage, fileFields: ReadonlySet<string>): Promise<{ fields: Array<[string, string]>; files: PostedFile[] }> {
  const limits = FORM_SUBMISSION_LIMITS
  return new Promise((resolve, reject) => {
    const fields: Array<[string, string]> = []
    const files: PostedFile[] = []
    let received = 0
    let fieldBytes = 0
    let fileBytes = 0
    let failed = false
    let parser: busboy.Busboy
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: {
          fieldNameSize: limits.maxFieldNameChars,
          fieldSize: limits.maxValueBytes,
          fields: limits.maxFields,
          files: limits.maxFiles,
          fileSize: limits.maxFileBytes,
          parts: limits.maxFields + limits.maxFiles,
        },
      })
    } catch {
      reject(new AppError('BAD_REQUEST', 'The form body cannot be read: its Content-Type is incomplete.'))
      return
    }
    const deadline = setTimeout(
      () => fail(new AppError('REQUEST_TIMEOUT', `The form body took longer than ${FORM_BODY_SECONDS} seconds to arrive.`)),
      FORM_BODY_SECONDS * 1000,
    )
    const fail = (error: Error) => {
      clearTimeout(deadline)
      if (failed) return
      failed = true
      req.unpipe(parser)
      reject(error)
    }
    /** A listener whose throw refuses this form instead of escaping into the event loop (which would end the process). */
    const guarded =
      <A extends unknown[]>(listener: (...args: A) => void) =>
      (...args: A) => {
        try {
          listener(...args)
        } catch (error) {
          fail(error as Error)
        }
      }
    /** busboy gives no name for a part without one (or with only an RFC 5987 `name*`), and no text for a charset it cannot decode. */
    const unreadable = (what: string) => new AppError('BAD_REQUEST', `The form body cannot be read: ${what}.`)
    req.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > FORM_BODY_MAX_BYTES) fail(tooLarge(`the body is over ${formatSize(FORM_BODY_MAX_BYTES)}`))
    })
    req.on('error', () => fail(new AppError('BAD_REQUEST', 'The form body was cut off.')))
    parser.on(
      'field',
      guarded((name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
        if (typeof name !== 'string' || name === '') return fail(unreadable('a field has no name'))
        if (typeof value !== 'string') return fail(unreadable(`the field ${JSON.stringify(name)} is in a charset that cannot be read (send UTF-8)`))
        if (info.nameTruncated) return fail(tooMany(name.slice(0, 40), `a field name over ${limits.maxFieldNameChars} characters`))
        if (info.valueTruncated) return fail(tooLarge(`the field ${JSON.stringify(name)} is over ${formatSize(limits.maxValueBytes)}`))
        fieldBytes += Buffer.byteLength(name) + Buffer.byteLength(value)
        if (fieldBytes > limits.maxFieldBytes) return fail(tooLarge(`its fields are over ${formatSize(limits.maxFieldBytes)} together`))
        fields.push([name, value])
      }),
    )
    parser.on(
      'file',
      guarded((field: string | undefined, stream: Readable, info: busboy.FileInfo) => {
        if (typeof field !== 'string' || field === '') {
          stream.resume()
          return fail(unreadable('a file has no field name'))
        }
        if (!fileFields.has(field)) {
          stream.resume()
          return fail(validationFailed({ [field]: 'takes no file: the form declares no file input of this name' }))
        }
        const chunks: Buffer[] = []
        stream.on(
          'data',
          guarded((chunk: Buffer) => {
            fileBytes += chunk.length
            if (fileBytes > limits.maxFilesBytes) fail(tooLarge(`its files are over ${formatSize(limits.maxFilesBytes)} together`))
            else chunks.push(chunk)
          }),
        )
        stream.on('limit', () => fail(tooLarge(`the file ${JSON.stringify(info.filename ?? field)} is over ${formatSize(limits.maxFileBytes)}`)))
        stream.on(
          'end',
          guarded(() => {
            const bytes = Buffer.concat(chunks)
            // A file input left empty is sent as a part with no file name and no bytes.
            if (failed || (bytes.length === 0 && !info.filename)) return
            files.push({ field, filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', bytes })
          }),
        )
      }),
    )
    parser.on('fieldsLimit', () => fail(tooMany('fields', `more than ${limits.maxFields} fields`)))
    parser.on('filesLimit', () => fail(tooMany('files', `more than ${limits.maxFiles} files`)))
    parser.on('partsLimit', () => fail(tooMany('fields', `more than ${limits.maxFields + limits.maxFiles} parts`)))
    parser.on('error', () => fail(new AppError('BAD_REQUEST', 'The form body is malformed.')))
    parser.on('close', () => {
      clearTimeout(deadline)
      if (!failed) resolve({ fields, files })
    })
    req.pipe(parser)
  })
}
