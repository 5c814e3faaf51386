/**
 * What a crash can leave in the blob store, removed: temp files of puts that never reached their
 * rename, and blobs no row refers to (a publish or upload that wrote its bytes and died before its
 * metadata committed, or before abandon() removed them). Run at start and by `plinth blobs sweep`.
 *
 * Why a referenced blob, or one a publish in flight is about to reference, is never deleted
 * (docs/architecture.md, "Storage"): a file is a candidate only when it is older than the grace
 * period, longer than any publish takes from writing its blobs to committing its rows; references
 * are asked of the database when the files are about to go, not when they were listed; and each
 * file is removed only if it is still older than the grace period at that instant. A publish
 * writing bytes that are stored already marks the file modified (BlobStore.put), so a blob
 * being claimed again is young at the moment it matters; and should a publish claim it between
 * the sweep's last check and the removal (a round trip on S3), the bytes read beforehand are put
 * back once the references are asked again (blob-removal.ts).
 */
import { readBlobFiles, restoreClaimed } from './blob-removal.ts'
import type { BlobEncoding, BlobFile, BlobStore } from './blob-store.ts'
import type { BlobsRepository } from './blobs.repository.ts'

/** Blobs younger than this are never swept: far longer than any publish or upload takes. */
export const BLOB_SWEEP_GRACE_MS = 60 * 60 * 1000
/** Temp files younger than this are a put in progress: one file of at most 2 MiB, written at once. */
export const TEMP_SWEEP_GRACE_MS = 10 * 60 * 1000

export interface SweepResult {
  tempFiles: number
  tempBytes: number
  /** Blobs (hashes) removed, with all their files (variants included). */
  orphanBlobs: number
  orphanFiles: number
  orphanBytes: number
  /** Blobs seen and kept: referenced, or too young to judge. */
  keptBlobs: number
}

export interface SweepOptions {
  blobGraceMs?: number
  tempGraceMs?: number
  /** The clock, for tests. */
  now?: () => number
}

/** Hashes asked of the database at once. */
const CHUNK = 500

export async function sweepBlobs(store: BlobStore, rows: BlobsRepository, options: SweepOptions = {}): Promise<SweepResult> {
  const now = options.now ?? Date.now
  const blobBefore = now() - (options.blobGraceMs ?? BLOB_SWEEP_GRACE_MS)
  const tempBefore = now() - (options.tempGraceMs ?? TEMP_SWEEP_GRACE_MS)
  const result: SweepResult = { tempFiles: 0, tempBytes: 0, orphanBlobs: 0, orphanFiles: 0, orphanBytes: 0, keptBlobs: 0 }

  // Files of one hash sit side by side in their folder, so a hash's group is complete once the
  // listing moves on to another hash; groups are judged in chunks as they come.
  let chunk = new Map<string, BlobFile[]>()
  const judge = async () => {
    const groups = chunk
    chunk = new Map()
    const old = [...groups].filter(([, files]) => files.every((f) => f.modifiedMs < blobBefore))
    result.keptBlobs += groups.size - old.length
    const referenced = await rows.referencedHashes(old.map(([hash]) => hash))
    for (const [hash, files] of old) {
      if (referenced.has(hash)) {
        result.keptBlobs++
        continue
      }
      // Identity first: readers take a blob whose identity bytes exist as complete.
      const ordered = [...files].sort((a, b) => (a.encoding === 'identity' ? -1 : b.encoding === 'identity' ? 1 : 0))
      // Read first, to put back should a publish claim the bytes while they go (blob-removal.ts).
      const saved = await readBlobFiles(
        store,
        hash,
        ordered.map((f) => f.encoding!),
      )
      const removed = new Map<BlobEncoding, Buffer>()
      let freed = 0
      for (const file of ordered) {
        const gone = await store.removeIfOlder(file, blobBefore)
        if (!gone && file.encoding === 'identity') break // written again meanwhile: keep it all
        if (gone) {
          const bytes = saved.get(file.encoding!)
          if (bytes !== undefined) removed.set(file.encoding!, bytes)
          freed += file.bytes
        }
      }
      if (removed.size === 0 || (await restoreClaimed(store, rows, new Map([[hash, removed]]))).has(hash)) {
        result.keptBlobs++
        continue
      }
      result.orphanBlobs++
      result.orphanFiles += removed.size
      result.orphanBytes += freed
    }
  }

  let last: string | null = null
  for await (const file of store.list()) {
    if (file.hash === null) {
      if (file.modifiedMs < tempBefore && (await store.removeIfOlder(file, tempBefore))) {
        result.tempFiles++
        result.tempBytes += file.bytes
      }
      continue
    }
    if (file.hash !== last && chunk.size >= CHUNK) await judge()
    last = file.hash
    const group = chunk.get(file.hash)
    if (group) group.push(file)
    else chunk.set(file.hash, [file])
  }
  await judge()
  return result
}

/** The sweep's result as one line, for logs and the CLI. */
export function describeSweep(result: SweepResult): string {
  const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
  return (
    `freed ${result.orphanBlobs} unreferenced blob${result.orphanBlobs === 1 ? '' : 's'} (${result.orphanFiles} files, ${result.orphanBytes} bytes, ${mib(result.orphanBytes)}) ` +
    `and ${result.tempFiles} temp file${result.tempFiles === 1 ? '' : 's'} (${result.tempBytes} bytes); kept ${result.keptBlobs} blob${result.keptBlobs === 1 ? '' : 's'}`
  )
}
