/**
 * Turns a request bundle into durable blobs and the rows that describe them, before any metadata
 * is written: decode and check every authoring rule (all violations at once), hash, precompress
 * new blobs, write them atomically. The caller then commits one metadata transaction, so a crash
 * at any instant leaves the whole version or none of it (unreferenced blobs are harmless).
 */
import { createHash } from 'node:crypto'
import type { BlobStore } from '../../blobs/blob-store.ts'
import type { BlobsTable } from '../../db/types.ts'
import { AppError } from '../../errors.ts'
import { nowIso } from '../../ids.ts'
import { checkBundle, type BundleFileInput } from './authoring-rules.ts'
import type { BlobsRepository } from './blobs.repository.ts'
import { compressVariants } from './compression.ts'

export interface StoredFile {
  path: string
  hash: string
  size: number
  contentType: string
}

export interface StoredBundle {
  files: StoredFile[]
  /** Rows of the blobs this publish wrote, to record in the metadata transaction. */
  newBlobs: BlobsTable[]
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

    const created: BlobsTable[] = []
    let next = 0
    const worker = async () => {
      while (next < missing.length) {
        const [hash, { bytes, contentType }] = missing[next++]
        const variants = await compressVariants(bytes, contentType)
        // Variants first: a blob whose identity bytes exist is assumed complete by readers.
        if (variants.br) await this.blobs.put(hash, variants.br, 'br')
        if (variants.gzip) await this.blobs.put(hash, variants.gzip, 'gzip')
        await this.blobs.put(hash, bytes)
        created.push({ hash, size: bytes.length, br_size: variants.br?.length ?? null, gzip_size: variants.gzip?.length ?? null, created_at: nowIso() })
      }
    }
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, missing.length) }, worker))

    return {
      files,
      newBlobs: created,
      totalBytes: check.totalBytes,
      newBlobBytes: created.reduce((sum, row) => sum + row.size + (row.br_size ?? 0) + (row.gzip_size ?? 0), 0),
    }
  }
}
