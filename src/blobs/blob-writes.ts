/**
 * Writing one blob and describing it: shared by the publish pipeline (many blobs, recorded in the
 * publish's own transaction) and by uploads (one blob, recorded on its own).
 */

import { nowIso } from '../core/ids.ts'
import type { BlobsTable } from '../db/types.ts'
import type { BlobStore } from './blob-store.ts'
import type { BlobsRepository } from './blobs.repository.ts'
import { compressVariants, type Variants } from './compression.ts'

export async function writeBlob(blobs: BlobStore, hash: string, bytes: Buffer, variants: Variants): Promise<void> {
  // Variants first (side by side): a blob whose identity bytes exist is taken as complete by readers.
  await Promise.all([variants.br && blobs.put(hash, variants.br, 'br'), variants.gzip && blobs.put(hash, variants.gzip, 'gzip')])
  await blobs.put(hash, bytes)
}

export const blobRow = (hash: string, bytes: Buffer, variants: Variants): BlobsTable => ({
  hash,
  size: bytes.length,
  br_size: variants.br?.length ?? null,
  gzip_size: variants.gzip?.length ?? null,
  created_at: nowIso(),
})

/**
 * Stores one blob outside any publish: nothing is written when its row exists already; otherwise
 * it is precompressed (by the given content type), written, recorded, and checked again after the
 * row is in, because a failing publish of the same bytes may have removed it meanwhile (see
 * PublishPipeline.commit).
 */
export async function storeBlob(blobs: BlobStore, rows: BlobsRepository, hash: string, bytes: Buffer, contentType: string): Promise<void> {
  if ((await rows.findExisting([hash])).has(hash)) return
  const variants = await compressVariants(bytes, contentType)
  await writeBlob(blobs, hash, bytes, variants)
  await rows.insertOneMissing(blobRow(hash, bytes, variants))
  if (!(await blobs.has(hash))) await writeBlob(blobs, hash, bytes, variants)
}
