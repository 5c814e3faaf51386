/**
 * Uploads: a client that cannot inline large binaries reserves uploads, PUTs each file's bytes to
 * a short-lived signed URL, and then names the upload wherever content is needed (a bundle file's
 * uploadId, importAsset). The bytes go to the content-addressed blob store on arrival, so a
 * publish that uses them copies nothing. Uploads belong to the user who reserved them: to anyone
 * else an upload id is unknown.
 */
import { createHash } from 'node:crypto'
import type { Principal } from '../core/principal.ts'
import type { BlobStore } from '../blobs/blob-store.ts'
import { removeUnreferencedBlobs } from '../blobs/blob-removal.ts'
import type { BlobVariants } from '../blobs/blob-variants.ts'
import { storeBlob } from '../blobs/blob-writes.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { AppError, validationFailed } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { UPLOAD_RETENTION_MS, UPLOAD_SWEEP_INTERVAL_MS, UPLOAD_URL_LIFETIME_MS } from '../core/limits.ts'
import { type Periodic, startPeriodic } from '../core/periodic.ts'
import type { ServerSecrets } from '../db/server-secrets.ts'
import type { UploadRow } from '../db/types.ts'
import { contentTypeFor } from '../publishing/content-rules.ts'
import type { ContentReferences, FileCaller, UploadState } from '../publishing/file-references.ts'
import { checkUploadUrl, signedUploadUrl } from './upload-urls.ts'
import type { UploadsRepository } from './uploads.repository.ts'
import type { CreateUploadsRequest, CreateUploadsResult, UploadContentResult } from './uploads.schemas.ts'

/** The body of an upload PUT: its declared length (when sent) and its bytes as they arrive. */
export interface UploadBody {
  contentLength: number | null
  chunks: AsyncIterable<Buffer | string> | null
}

export interface UploadedFile {
  bytes: Buffer
  contentType: string | null
  filename: string | null
}

/** Expired uploads deleted at once by the sweep. */
const SWEEP_BATCH = 500

export class UploadsService implements ContentReferences {
  private sweeps: Periodic | null = null

  /** `baseUrl`: the API origin that signed upload URLs point at. */
  constructor(
    private readonly options: {
      baseUrl: string
      repo: UploadsRepository
      blobs: BlobStore
      blobRows: BlobsRepository
      blobVariants: BlobVariants
      secrets: ServerSecrets
      log: { error(obj: unknown, msg?: string): void }
    },
  ) {}

  async create(principal: Principal, input: CreateUploadsRequest): Promise<CreateUploadsResult> {
    const now = Date.now()
    // Whole seconds, the precision of the signed URL, so the row and the URL agree.
    const expiresAtMs = Math.floor((now + UPLOAD_URL_LIFETIME_MS) / 1000) * 1000
    const expiresAt = new Date(expiresAtMs).toISOString()
    const rows: UploadRow[] = input.files.map((file) => ({
      id: newId('upl'),
      user_id: principal.userId,
      filename: file.filename ?? null,
      content_type: file.contentType ?? null,
      size: file.size,
      status: 'pending',
      sha256: null,
      expires_at: expiresAt,
      created_at: new Date(now).toISOString(),
      completed_at: null,
    }))
    await this.release(await this.options.repo.deleteExpired(principal.userId, nowIso()))
    await this.options.repo.insert(rows)
    const key = await this.options.secrets.key('upload_url_key')
    return {
      uploads: rows.map((row) => ({
        uploadId: row.id,
        uploadUrl: signedUploadUrl(this.options.baseUrl, key, row.id, expiresAtMs),
        method: 'PUT' as const,
        headers: putHeaders(row.content_type),
        expiresAt,
        size: row.size,
      })),
    }
  }

  /** The PUT of an upload's bytes: the signed URL is the credential, the size must be exact. */
  async receive(uploadId: string, query: { expires?: string; signature?: string }, body: UploadBody): Promise<UploadContentResult> {
    const url = checkUploadUrl(await this.options.secrets.key('upload_url_key'), uploadId, query.expires, query.signature, Date.now())
    if (!url.ok && url.reason === 'expired') {
      throw new AppError(
        'UPLOAD_URL_EXPIRED',
        `This upload URL has expired (upload URLs last ${UPLOAD_URL_LIFETIME_MS / 60_000} minutes): reserve a new upload with createUploads and PUT the bytes to its URL.`,
      )
    }
    if (!url.ok)
      throw new AppError(
        'UPLOAD_URL_INVALID',
        'This upload URL is not valid: use the uploadUrl returned by createUploads exactly as given, query string included.',
      )
    const upload = await this.options.repo.find(uploadId)
    if (!upload) throw new AppError('NOT_FOUND', 'Upload not found.')
    if (upload.status === 'complete') throw uploadCompleted()

    const size = Number(upload.size)
    if (body.contentLength !== null && body.contentLength > size) throw tooLarge(size, body.contentLength)
    if (body.contentLength !== null && body.contentLength < size) throw wrongSize(size, body.contentLength)
    const bytes = await readExactly(body.chunks, size)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    await storeBlob(
      this.options.blobs,
      this.options.blobRows,
      this.options.blobVariants,
      sha256,
      bytes,
      contentTypeFor(upload.filename ?? '', upload.content_type ?? undefined),
    )
    const at = nowIso()
    if (!(await this.options.repo.complete(upload.id, sha256, at, new Date(Date.now() + UPLOAD_RETENTION_MS).toISOString()))) throw uploadCompleted()
    return { uploadId: upload.id, sha256, size }
  }

  /**
   * Deletes every expired upload (pending past its URL's lifetime, complete past its retention),
   * with the bytes nothing else holds; how many uploads went.
   */
  async sweepExpired(now = Date.now()): Promise<number> {
    const at = new Date(now).toISOString()
    let removed = 0
    for (;;) {
      const { count, hashes } = await this.options.repo.deleteSomeExpired(at, SWEEP_BATCH)
      await this.release(hashes)
      removed += count
      if (count < SWEEP_BATCH) return removed
    }
  }

  /** Sweeps now, then every UPLOAD_SWEEP_INTERVAL_MS until close(). */
  async startSweeps(): Promise<void> {
    this.sweeps = await startPeriodic(
      () => this.sweepExpired(),
      UPLOAD_SWEEP_INTERVAL_MS,
      (error) => this.options.log.error({ err: error }, 'sweeping expired uploads failed'),
    )
  }

  close(): void {
    this.sweeps?.stop()
  }

  /** Removes the blobs among these that nothing refers to any more (the uploads that held them are gone). */
  private release(hashes: string[]): Promise<void> {
    return hashes.length === 0 ? Promise.resolve() : removeUnreferencedBlobs(this.options.blobs, this.options.blobRows, hashes)
  }

  /** The bytes of a completed, unexpired upload of the caller (for importAsset). */
  async readUpload(principal: Principal, uploadId: string): Promise<UploadedFile> {
    const [upload] = await this.options.repo.findOwned(principal.userId, [uploadId])
    const state = upload ? stateOf(upload, nowIso()) : undefined
    if (!state || state.state === 'expired') {
      throw validationFailed({ uploadId: state ? 'has expired; upload the file again' : 'is not a known upload of yours' })
    }
    if (state.state === 'incomplete') throw validationFailed({ uploadId: 'has no bytes yet: PUT them to its uploadUrl first' })
    return { bytes: await this.options.blobs.get(state.sha256), contentType: upload!.content_type, filename: upload!.filename }
  }

  async uploadsOf(userId: string, uploadIds: string[]): Promise<Map<string, UploadState>> {
    const now = nowIso()
    return new Map((await this.options.repo.findOwned(userId, uploadIds)).map((row) => [row.id, stateOf(row, now)]))
  }

  async usableHashes(caller: FileCaller, hashes: string[]): Promise<Set<string>> {
    const now = nowIso()
    const [published, drafted, uploaded] = await Promise.all([
      this.options.repo.publishedHashes(caller, hashes),
      this.options.repo.draftHashes(caller, hashes, now),
      this.options.repo.uploadedHashes(caller.userId, hashes, now),
    ])
    return new Set([...published, ...drafted, ...uploaded])
  }
}

function stateOf(row: UploadRow, now: string): UploadState {
  if (row.expires_at <= now) return { state: 'expired' }
  return row.status === 'complete' && row.sha256 ? { state: 'ready', sha256: row.sha256 } : { state: 'incomplete' }
}

/** Reads a body that must be exactly `size` bytes, refusing as soon as it runs over. */
async function readExactly(chunks: AsyncIterable<Buffer | string> | null, size: number): Promise<Buffer> {
  const parts: Buffer[] = []
  let received = 0
  try {
    for await (const chunk of chunks ?? []) {
      const part = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      received += part.length
      if (received > size) throw tooLarge(size, received)
      parts.push(part)
    }
  } catch (error) {
    if (error instanceof AppError) throw error
    throw new AppError('BAD_REQUEST', 'The upload body was interrupted before it was complete; PUT it again.', { cause: error })
  }
  if (received !== size) throw wrongSize(size, received)
  return Buffer.concat(parts, size)
}

const uploadCompleted = () =>
  new AppError('UPLOAD_COMPLETED', 'The bytes of this upload were already received; an upload is written once. Reserve a new upload to send other bytes.')

const tooLarge = (size: number, sent: number) =>
  new AppError(
    'PAYLOAD_TOO_LARGE',
    `This upload was reserved for exactly ${size} bytes, but the body is larger (at least ${sent} bytes). Reserve an upload with the file's exact size.`,
  )

const wrongSize = (size: number, sent: number) =>
  new AppError(
    'BAD_REQUEST',
    `This upload was reserved for exactly ${size} bytes, but the body has ${sent}. Send the whole file, or reserve an upload with the file's exact size.`,
  )

/** The headers the PUT of an upload sends: its declared Content-Type, when it has one. */
function putHeaders(contentType: string | null): Record<string, string> {
  return contentType ? { 'Content-Type': contentType } : {}
}
