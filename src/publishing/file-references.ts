/**
 * Bundle files given by reference instead of content: `uploadId` (bytes PUT to a signed upload
 * URL) or `sha256` (bytes the caller has already published). They are resolved to stored blobs
 * before the authoring rules run, so every limit and rule applies to them exactly as to inline
 * files; files a service gives as stored blobs already (a draft's) pass as they are. Resolving
 * reads no bytes: the recorded size is all the rules need but the content rules, and those read a
 * stored file's text only when they have no result for its blob remembered (publish-pipeline.ts),
 * so an unchanged file costs one row lookup and no I/O.
 */
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { type PublishViolation, validationFailed } from '../core/errors.ts'
import { MAX_ERROR_FIELDS } from '../core/limits.ts'
import type { AnyFileInput, BundleFileInput, StoredFileInput } from './authoring-rules.ts'
import { quoted } from '../core/text.ts'
import type { Principal } from '../core/principal.ts'
import type { PublishFileInput } from './publishing.schemas.ts'

/** Who publishes: the user, and the sites their token reaches (null or absent: every one they see). */
export type FileCaller = Pick<Principal, 'userId'> & Partial<Pick<Principal, 'sites'>>

export type UploadState = { state: 'ready'; sha256: string } | { state: 'incomplete' } | { state: 'expired' }

/** Where references are looked up: the caller's uploads, and the published bytes they may reuse. */
export interface ContentReferences {
  /** The caller's own uploads among the ids; other users' uploads are absent, as unknown ones. */
  uploadsOf(userId: string, uploadIds: string[]): Promise<Map<string, UploadState>>
  /**
   * The hashes among these that name bytes of a version or an open draft of a site the caller
   * reaches (the user owns or edits it, and their token is not limited to other sites), or of a
   * usable upload of the user's.
   */
  usableHashes(caller: FileCaller, hashes: string[]): Promise<Set<string>>
}

const SOURCES = ['content', 'uploadId', 'sha256'] as const

/**
 * The exactly-one rule, which JSON Schema would state only with an unreadable oneOf: a file has
 * exactly one of content, uploadId and sha256, and contentEncoding only with content. What a file
 * breaks of it, with the field to name (`''` for the file itself), or null.
 */
export function sourceProblem(file: Omit<PublishFileInput, 'path'>): { field: '' | 'contentEncoding'; message: string } | null {
  const given = SOURCES.filter((key) => file[key] !== undefined)
  if (given.length !== 1) {
    return {
      field: '',
      message: given.length === 0 ? 'needs one of content, uploadId or sha256' : `has ${given.join(' and ')}; give exactly one of content, uploadId or sha256`,
    }
  }
  if (file.contentEncoding !== undefined && file.content === undefined) return { field: 'contentEncoding', message: 'is only allowed with content' }
  return null
}

/** The exactly-one rule for every file of a bundle: VALIDATION_FAILED naming `files[i]` (or `files[i].contentEncoding`). */
function assertOneSourceEach(files: Array<PublishFileInput | StoredFileInput>): void {
  const fields: Record<string, string> = {}
  let count = 0
  for (const [i, file] of files.entries()) {
    if (count >= MAX_ERROR_FIELDS) break
    if (isStored(file)) continue
    const problem = sourceProblem(file)
    if (problem === null) continue
    fields[problem.field === '' ? `files[${i}]` : `files[${i}].${problem.field}`] = problem.message
    count++
  }
  if (count > 0) throw validationFailed(fields)
}

const isStored = (file: PublishFileInput | StoredFileInput): file is StoredFileInput => 'stored' in file
const isInline = (file: PublishFileInput | StoredFileInput): file is BundleFileInput => !isStored(file) && file.content !== undefined
const isResolved = (file: PublishFileInput | StoredFileInput): file is BundleFileInput | StoredFileInput => isStored(file) || isInline(file)
/** A file given by uploadId or sha256. */
const isReference = (file: PublishFileInput | StoredFileInput): file is PublishFileInput => !isResolved(file)

/**
 * The files as the authoring rules take them: inline and stored ones as they are, references
 * resolved. `maxFiles`: the bundle limit, over which the bundle is refused anyway.
 */
export async function resolveFiles(
  files: Array<PublishFileInput | StoredFileInput>,
  caller: FileCaller,
  references: ContentReferences,
  blobRows: BlobsRepository,
  maxFiles: number,
): Promise<AnyFileInput[]> {
  assertOneSourceEach(files)
  if (files.every(isResolved)) return files
  // Over the file limit the bundle is refused anyway: no lookups for thousands of references.
  if (files.length > maxFiles) {
    return files.map((file) => (isResolved(file) ? file : { path: file.path, contentType: file.contentType, unresolved: null }))
  }

  const byReference = files.filter(isReference)
  const uploadIds = unique(byReference.map((f) => f.uploadId))
  const hashes = unique(byReference.map((f) => f.sha256))
  const [uploads, usable] = await Promise.all([references.uploadsOf(caller.userId, uploadIds), references.usableHashes(caller, hashes)])
  const uploadHashes = [...uploads.values()].flatMap((u) => (u.state === 'ready' ? [u.sha256] : []))
  const rows = await blobRows.findExisting(unique([...usable, ...uploadHashes]))

  return files.map((file): AnyFileInput => {
    if (isResolved(file)) return file
    const { path, contentType } = file
    const problem = (upload: UploadState | undefined) =>
      file.uploadId !== undefined ? uploadProblem(file.uploadId, path, upload) : unknownHash(path, file.sha256!)
    const upload = file.uploadId !== undefined ? uploads.get(file.uploadId) : undefined
    const hash = file.uploadId !== undefined ? (upload?.state === 'ready' ? upload.sha256 : undefined) : usable.has(file.sha256!) ? file.sha256 : undefined
    // A hash without a blob row cannot be served: reported like an unknown reference.
    const row = hash === undefined ? undefined : rows.get(hash)
    if (!row) return { path, contentType, unresolved: problem(hash === undefined ? upload : undefined) }
    return { path, contentType, stored: { hash: row.hash, size: Number(row.size) } }
  })
}

function uploadProblem(uploadId: string, path: string, upload: UploadState | undefined): PublishViolation {
  if (upload?.state === 'incomplete') {
    return {
      code: 'UPLOAD_INCOMPLETE',
      path,
      detail: uploadId,
      message: `${path} names the upload ${quoted(uploadId)}, whose bytes have not been received: PUT the file's bytes to its uploadUrl first (before the URL expires), then publish again.`,
    }
  }
  const why = upload?.state === 'expired' ? 'has expired' : 'is unknown (an upload can be used only by the user who reserved it)'
  return {
    code: 'UNKNOWN_UPLOAD',
    path,
    detail: uploadId,
    message: `${path} names the upload ${quoted(uploadId)}, which ${why}: reserve a new upload with createUploads and PUT the bytes again, or send this file with content instead.`,
  }
}

const unknownHash = (path: string, hash: string): PublishViolation => ({
  code: 'UNKNOWN_HASH',
  path,
  detail: hash,
  message: `${path} is given by sha256, but no bytes with that hash are available to you (only bytes of a version or an open draft of a site you own or edit, or of a completed upload of yours, can be reused): send this file with content instead.`,
})

function unique(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined))]
}
