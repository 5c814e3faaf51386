/**
 * Turns a request bundle into durable blobs and the rows that describe them, before any metadata
 * is written: decode and check every authoring rule (all violations at once), hash, precompress
 * new blobs, write them atomically. The caller then commits one metadata transaction through
 * commit(), so a crash at any instant leaves the whole version or none of it, and a failed
 * publish removes the blobs it wrote.
 */
import { createHash } from 'node:crypto'
import type { BlobStore } from '../../blobs/blob-store.ts'
import type { BlobsTable } from '../../db/types.ts'
import { AppError } from '../../errors.ts'
import { nowIso } from '../../ids.ts'
import { checkBundle, type BundleFileInput } from './authoring-rules.ts'
import type { BlobsRepository } from './blobs.repository.ts'
import { compressVariants, type Variants } from './compression.ts'

export interface StoredFile {
  path: string
  hash: string
  size: number
  contentType: string
}

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
}

/** How many blobs are compressed and written at once. */
const WRITE_CONCURRENCY = 4

export class PublishPipeline {
  constructor(
    private readonly blobs: BlobStore,
    private readonly blobRows: BlobsRepository,
  ) {}

  async store(input: BundleFileInput[]): Promise<StoredBundle> {
    const check = checkBundle(input)
    if (check.violations.length > 0) {
      const count = check.violations.length
      throw new AppError(
        'PUBLISH_INVALID',
        `The bundle breaks ${count === 1 ? 'an authoring rule' : `${count} authoring rules`}; fix every listed violation and publish again.`,
        { violations: check.violations },
      )
    }

    const files: StoredFile[] = check.files.map((file) => ({
      path: file.path,
      hash: createHash('sha256').update(file.bytes).digest('hex'),
      size: file.bytes.length,
      contentType: file.contentType,
    }))
    const bytesByHash = new Map(check.files.map((file, i) => [files[i].hash, { bytes: file.bytes, contentType: file.contentType }]))
    const known = await this.blobRows.findExisting([...bytesByHash.keys()])
    const missing = [...bytesByHash].filter(([hash]) => !known.has(hash))

    const written: WrittenBlob[] = []
    let next = 0
    const worker = async () => {
      while (next < missing.length) {
        const [hash, { bytes, contentType }] = missing[next++]
        const variants = await compressVariants(bytes, contentType)
        await this.write(hash, bytes, variants)
        const row = { hash, size: bytes.length, br_size: variants.br?.length ?? null, gzip_size: variants.gzip?.length ?? null, created_at: nowIso() }
        written.push({ row, bytes, variants })
      }
    }
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, missing.length) }, worker))

    return {
      files,
      newBlobs: written.map((w) => w.row),
      written,
      totalBytes: check.totalBytes,
      newBlobBytes: written.reduce((sum, { row }) => sum + row.size + (row.br_size ?? 0) + (row.gzip_size ?? 0), 0),
    }
  }

  /**
   * Runs the metadata transaction that records the bundle. On failure, the blobs this publish
   * wrote are removed again, so a failed publish leaves no bytes behind. Another publish of the
   * same bytes may be relying on them at the same moment; both sides hold the bytes, so each
   * repairs the other's move: the failing side deletes only blobs without a row and restores any
   * whose row appeared meanwhile, and the succeeding side checks after its commit that its new
   * blobs are there and rewrites any that are gone.
   */
  async commit<T>(bundle: StoredBundle, record: () => Promise<T>): Promise<T> {
    let result: T
    try {
      result = await record()
    } catch (error) {
      await this.discard(bundle.written)
      throw error
    }
    for (const blob of bundle.written) {
      if (!(await this.blobs.has(blob.row.hash))) await this.write(blob.row.hash, blob.bytes, blob.variants)
    }
    return result
  }

  private async discard(written: WrittenBlob[]): Promise<void> {
    if (written.length === 0) return
    const hashes = written.map((w) => w.row.hash)
    const kept = await this.blobRows.findExisting(hashes)
    const orphans = written.filter((w) => !kept.has(w.row.hash))
    for (const blob of orphans) await this.blobs.delete(blob.row.hash)
    const claimedMeanwhile = await this.blobRows.findExisting(orphans.map((w) => w.row.hash))
    for (const blob of orphans) {
      if (claimedMeanwhile.has(blob.row.hash)) await this.write(blob.row.hash, blob.bytes, blob.variants)
    }
  }

  private async write(hash: string, bytes: Buffer, variants: Variants): Promise<void> {
    // Variants first: a blob whose identity bytes exist is taken as complete by readers.
    if (variants.br) await this.blobs.put(hash, variants.br, 'br')
    if (variants.gzip) await this.blobs.put(hash, variants.gzip, 'gzip')
    await this.blobs.put(hash, bytes)
  }
}
