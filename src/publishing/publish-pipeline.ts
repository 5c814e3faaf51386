/**
 * Turns a request bundle into durable blobs and the rows that describe them, before any metadata
 * is written: resolve files given by upload or by hash to stored blobs, decode and check every
 * authoring rule (all violations at once), hash, precompress new blobs, write them atomically.
 * The caller then records the bundle in one metadata transaction of its own and tells the
 * pipeline how that went: confirm() after a commit, abandon() after a failure (which removes the
 * blobs this publish wrote). So a crash at any instant leaves the whole version or none of it.
 */
import { createHash } from 'node:crypto'
import type { BlobStore, StoredFile } from '../blobs/blob-store.ts'
import { blobRow, writeBlob } from '../blobs/blob-writes.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { compressVariants, type Variants } from '../blobs/compression.ts'
import { AppError, type PublishViolation } from '../core/errors.ts'
import type { BlobsTable } from '../db/types.ts'
import { checkBundle } from './authoring-rules.ts'
import { type ContentReferences, resolveFiles } from './file-references.ts'
import type { PublishFileInput } from './publishing.schemas.ts'

/** A blob this publish wrote, kept in memory until the publish ends so it can be restored. */
interface WrittenBlob {
  row: BlobsTable
  bytes: Buffer
  variants: Variants
}

export interface StoredBundle {
  files: StoredFile[]
  /** Rows of the blobs this publish wrote, to record in the metadata transaction. */
  newBlobs: BlobsTable[]
  written: WrittenBlob[]
  totalBytes: number
  /** Bytes this publish added to the blob store (0 when every file was already stored). */
  newBlobBytes: number
  /** What browsers will still block on the site (see BundleCheck.warnings). */
  warnings: PublishViolation[]
}

export interface PublishPipelineOptions {
  blobs: BlobStore
  blobRows: BlobsRepository
  /** Resolves files given by uploadId or sha256 (the uploads feature implements it). */
  references: ContentReferences
  /** Sites are served over https, so plain-http subresources are reported as mixed content. */
  httpsSites: boolean
}

/** Who publishes, and where on their site files may not go. */
export interface PublishTarget {
  /** The publishing user: files given by reference resolve only to bytes they may use. */
  userId: string
  /** The site's collections, whose reserved paths no file may take (RESERVED_PATH). */
  collectionNames: readonly string[]
}

/** How many blobs are compressed and written at once: most of a write is waiting for fsync. */
const WRITE_CONCURRENCY = 16

export class PublishPipeline {
  private readonly blobs: BlobStore
  private readonly blobRows: BlobsRepository
  private readonly references: ContentReferences
  private readonly httpsSites: boolean

  constructor(options: PublishPipelineOptions) {
    this.blobs = options.blobs
    this.blobRows = options.blobRows
    this.references = options.references
    this.httpsSites = options.httpsSites
  }

  /** Checks the bundle (PUBLISH_INVALID with every violation) and writes the blobs it lacks. */
  async store(input: PublishFileInput[], target: PublishTarget): Promise<StoredBundle> {
    const resolved = await resolveFiles(input, target.userId, this.references, this.blobRows, this.blobs)
    const check = checkBundle(resolved, undefined, { collectionNames: target.collectionNames, httpsSites: this.httpsSites })
    if (check.violations.length > 0) throw publishInvalid(check.violations)

    // Files given by reference are stored already: only inline bytes are hashed, and maybe written.
    const bytesByHash = new Map<string, { bytes: Buffer; contentType: string }>()
    const files: StoredFile[] = check.files.map((file) => {
      if ('hash' in file) return file
      const hash = createHash('sha256').update(file.bytes).digest('hex')
      bytesByHash.set(hash, { bytes: file.bytes, contentType: file.contentType })
      return { path: file.path, hash, size: file.bytes.length, contentType: file.contentType }
    })
    const known = await this.blobRows.findExisting([...bytesByHash.keys()])
    const missing = [...bytesByHash].filter(([hash]) => !known.has(hash))

    const written: WrittenBlob[] = []
    let next = 0
    const worker = async () => {
      while (next < missing.length) {
        const [hash, { bytes, contentType }] = missing[next++]
        const variants = await compressVariants(bytes, contentType)
        await writeBlob(this.blobs, hash, bytes, variants)
        written.push({ row: blobRow(hash, bytes, variants), bytes, variants })
      }
    }
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, missing.length) }, worker))

    return {
      files,
      newBlobs: written.map((w) => w.row),
      written,
      totalBytes: check.totalBytes,
      newBlobBytes: written.reduce((sum, { row }) => sum + row.size + (row.br_size ?? 0) + (row.gzip_size ?? 0), 0),
      warnings: check.warnings,
    }
  }

  /**
   * After the metadata transaction that records the bundle committed: another publish of the same
   * bytes may have failed meanwhile and removed blobs this one wrote (see abandon), so each new
   * blob is checked and rewritten if it is gone.
   */
  async confirm(bundle: StoredBundle): Promise<void> {
    for (const blob of bundle.written) {
      if (!(await this.blobs.has(blob.row.hash))) await writeBlob(this.blobs, blob.row.hash, blob.bytes, blob.variants)
    }
  }

  /**
   * After the metadata transaction failed: the blobs this publish wrote are removed again, so a
   * failed publish leaves no bytes behind. Another publish of the same bytes may be relying on
   * them at the same moment; both sides hold the bytes, so each repairs the other's move: this
   * side deletes only blobs without a row and restores any whose row appeared meanwhile, and the
   * succeeding side rewrites any that are gone in confirm().
   */
  async abandon(bundle: StoredBundle): Promise<void> {
    const written = bundle.written
    if (written.length === 0) return
    const hashes = written.map((w) => w.row.hash)
    const kept = await this.blobRows.findExisting(hashes)
    const orphans = written.filter((w) => !kept.has(w.row.hash))
    for (const blob of orphans) await this.blobs.delete(blob.row.hash)
    const claimedMeanwhile = await this.blobRows.findExisting(orphans.map((w) => w.row.hash))
    for (const blob of orphans) {
      if (claimedMeanwhile.has(blob.row.hash)) await writeBlob(this.blobs, blob.row.hash, blob.bytes, blob.variants)
    }
  }
}

function publishInvalid(violations: PublishViolation[]): AppError {
  const count = violations.length
  const unknownHashes = violations.filter((v) => v.code === 'UNKNOWN_HASH').length
  const resend =
    unknownHashes === 0
      ? ''
      : ` ${unknownHashes === 1 ? 'One file is' : `${unknownHashes} files are`} given by a sha256 the service cannot use for you (UNKNOWN_HASH): send ${unknownHashes === 1 ? 'it' : 'those files'} with content instead.`
  return new AppError(
    'PUBLISH_INVALID',
    `The bundle breaks ${count === 1 ? 'an authoring rule' : `${count} authoring rules`}; fix every listed violation and publish again.${resend}`,
    { violations },
  )
}
