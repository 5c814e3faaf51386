/**
 * Writing one blob and describing it: shared by the publish pipeline (many blobs, recorded in the
 * publish's own transaction) and by uploads and the image library (one blob, recorded on its own).
 * Only the identity bytes are written here; the row records the variants as pending when the
 * content type is worth compressing, and BlobVariants makes them once the row is in.
 */

import { nowIso } from '../core/ids.ts'
import type { BlobsTable } from '../db/types.ts'
import type { BlobStore } from './blob-store.ts'
import type { BlobVariants } from './blob-variants.ts'
import type { BlobsRepository } from './blobs.repository.ts'
import { worthCompressing } from './compression.ts'

export const blobRow = (hash: string, bytes: Buffer, contentType: string): BlobsTable => ({
  hash,
  size: bytes.length,
  br_size: null,
  gzip_size: null,
  variants_type: worthCompressing(bytes.length, contentType) ? contentType : null,
  created_at: nowIso(),
})

/**
 * Stores one blob outside any publish: nothing is written when its row exists already; otherwise
 * it is written, recorded, and checked again after the row is in, because a failing publish of the
 * same bytes may have removed it meanwhile (see PublishPipeline.abandon). Its variants follow.
 */
export async function storeBlob(
  blobs: BlobStore,
  rows: BlobsRepository,
  variants: BlobVariants,
  hash: string,
  bytes: Buffer,
  contentType: string,
): Promise<void> {
  if ((await rows.findExisting([hash])).has(hash)) return
  await blobs.put(hash, bytes)
  const row = blobRow(hash, bytes, contentType)
  await rows.insertOneMissing(row)
  if (!(await blobs.has(hash))) await blobs.put(hash, bytes)
  variants.scheduleWritten([{ row, bytes }])
}
