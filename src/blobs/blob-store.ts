/**
 * Content-addressed storage of file bytes. A blob is named by the SHA-256 of its identity bytes;
 * precompressed variants live beside it under the same name. Identical bytes are stored once
 * across versions and sites. The filesystem store (fs-blob-store.ts) is the default; an
 * S3-compatible bucket (s3-blob-store.ts) serves several instances at once.
 */
export type BlobEncoding = 'identity' | 'br' | 'gzip'

export interface BlobStore {
  has(hash: string, encoding?: BlobEncoding): Promise<boolean>
  /**
   * Atomic, idempotent and durable once it resolves: readers see the whole blob or none of it,
   * and a crash after it resolved keeps it. A put of bytes already stored marks them modified now.
   */
  put(hash: string, bytes: Buffer, encoding?: BlobEncoding): Promise<void>
  /** Throws an error with code 'ENOENT' when the blob is missing. */
  get(hash: string, encoding?: BlobEncoding): Promise<Buffer>
  /** Removes the blob and its variants; a missing one is not an error. */
  delete(hash: string): Promise<void>
  /** Every file of the store, blobs, variants and temp files alike (for the sweep, blob-sweep.ts). */
  list(): AsyncIterable<BlobFile>
  /**
   * Removes one listed file if it was last modified before `beforeMs`, checked again at removal;
   * false when it is gone or newer. A put of bytes already stored marks them modified (see put),
   * so a blob being published again is never taken for an old one.
   */
  removeIfOlder(file: BlobFile, beforeMs: number): Promise<boolean>
  /** Rejects unless the store can be read and written now (the readiness probe, /readyz). */
  check(): Promise<void>
  /** Resolves once the work a store does in the background after its puts is done (tests, benchmarks). */
  settled(): Promise<void>
  /** Lets go of connections and of what the store keeps on the side; the store is not used afterwards. */
  close(): Promise<void>
}

/** One file of the store: a blob or variant (hash and encoding set), or a temp file (both null). */
export interface BlobFile {
  /** Path inside the store. */
  name: string
  hash: string | null
  encoding: BlobEncoding | null
  bytes: number
  modifiedMs: number
}

export const SHA256_HEX = /^[0-9a-f]{64}$/

const SUFFIX: Readonly<Record<BlobEncoding, string>> = { identity: '', br: '.br', gzip: '.gz' }

/**
 * A blob's files in the order they are removed: identity first, since readers take a blob whose
 * identity bytes exist as complete. They are put back in the reverse order.
 */
export const BLOB_ENCODINGS: readonly BlobEncoding[] = ['identity', 'br', 'gzip']

/** The encoding a blob file's suffix names ('' is the identity bytes). */
export const ENCODING_OF_SUFFIX: Readonly<Record<string, BlobEncoding>> = { '': 'identity', '.br': 'br', '.gz': 'gzip' }

/** A blob file's name, the same in every store: the hash, then the suffix of its encoding. */
export function blobFileName(hash: string, encoding: BlobEncoding): string {
  if (!SHA256_HEX.test(hash)) throw new Error(`not a sha256 hex digest: ${hash}`)
  return `${hash}${SUFFIX[encoding]}`
}

/** A file of a site version: a path naming a stored blob. */
export interface StoredFile {
  /** Path inside the site, without a leading slash: `index.html`, `about/index.html`. */
  path: string
  /** SHA-256 hex of the identity bytes: the blob name. */
  hash: string
  /** Byte length of the identity bytes. */
  size: number
  /** Bare media type, e.g. `text/html` (no parameters). */
  contentType: string
}
