/**
 * Removing a blob that nothing seemed to refer to, safely against a publish of the same bytes on
 * any instance. Between the check that found no reference and the removal answering, a publish
 * may store those bytes again (a put that finds them already stored only marks them), commit its
 * rows and check that its blobs are there (confirm()); the removal would then take bytes a live
 * version needs. On a filesystem that window is two system calls; against a bucket it is a round
 * trip, and longer under load. So the bytes are read before they are removed (a publish that
 * abandons its own blobs holds them already), the references are asked again once the removal has
 * answered, and if one has appeared the bytes are put back.
 * Whatever commits after that second check finds the blob gone in its confirm() and writes it
 * again, as it already must when a failing publish of the same bytes removes them.
 */
import { BLOB_ENCODINGS, type BlobEncoding, type BlobStore } from './blob-store.ts'
import type { BlobsRepository } from './blobs.repository.ts'

/** Variants first, then the identity bytes, which readers take as complete. */
const PUT_BACK_ORDER = [...BLOB_ENCODINGS].reverse()

/** The stored files of a blob (those that exist), read whole. */
export async function readBlobFiles(store: BlobStore, hash: string, encodings: readonly BlobEncoding[] = BLOB_ENCODINGS): Promise<Map<BlobEncoding, Buffer>> {
  const saved = new Map<BlobEncoding, Buffer>()
  for (const encoding of encodings) {
    try {
      saved.set(encoding, await store.get(hash, encoding))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return saved
}

/**
 * After removals answered: the blobs among `removed` (hash -> the files removed, with their bytes)
 * that something refers to now get those files back (variants first, then the identity bytes,
 * which readers take as complete). Answers the hashes put back. One query for all of them.
 */
export async function restoreClaimed(
  store: BlobStore,
  rows: BlobsRepository,
  removed: ReadonlyMap<string, ReadonlyMap<BlobEncoding, Buffer>>,
): Promise<Set<string>> {
  const hashes = [...removed].filter(([, files]) => files.size > 0).map(([hash]) => hash)
  const claimed = await rows.referencedHashes(hashes)
  for (const hash of claimed) {
    const files = removed.get(hash)!
    for (const encoding of PUT_BACK_ORDER) {
      const bytes = files.get(encoding)
      if (bytes !== undefined) await store.put(hash, bytes, encoding)
    }
  }
  return claimed
}

/** Blobs whose rows are deleted in one statement. */
const REMOVAL_CHUNK = 500

/**
 * Removes the blobs among `hashes` that nothing refers to any more (a deleted website's, those a
 * draft stopped holding): their rows, then their files. Doing it at once, rather than leaving it to
 * the sweep and its grace period, is safe with publishes and uploads in flight (see blob-sweep.ts
 * and docs/storage.md):
 * - A row that a version or draft file, library image or upload refers to is never deleted, and
 *   one cannot be referred to once deleted (foreign keys): a publish that counted on it fails
 *   instead of serving a missing file.
 * - Bytes stored again after their row went get a new row, written with the bytes: the files of a
 *   hash are removed only if no row or reference has appeared when they are; should one appear
 *   while they go, they are put back (restoreClaimed), and a publish committing later finds them
 *   gone in its confirm() and writes them again.
 */
export async function removeUnreferencedBlobs(store: BlobStore, rows: BlobsRepository, hashes: readonly string[]): Promise<void> {
  const distinct = [...new Set(hashes)]
  for (let start = 0; start < distinct.length; start += REMOVAL_CHUNK) {
    for (const hash of await rows.deleteUnreferenced(distinct.slice(start, start + REMOVAL_CHUNK))) {
      if ((await rows.referencedHashes([hash])).size > 0) continue
      // Read first, to put back should a publish claim the bytes while they go.
      const saved = await readBlobFiles(store, hash)
      await store.delete(hash)
      await restoreClaimed(store, rows, new Map([[hash, saved]]))
    }
  }
}
