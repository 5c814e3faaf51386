/**
 * Content-addressed storage of file bytes. A blob is named by the SHA-256 of its identity bytes;
 * precompressed variants live beside it under the same name. Identical bytes are stored once
 * across versions and sites. The filesystem store is the default; an S3-compatible store can
 * implement the same interface.
 */
export type BlobEncoding = 'identity' | 'br' | 'gzip'

export interface BlobStore {
  has(hash: string, encoding?: BlobEncoding): Promise<boolean>
  /** Atomic and idempotent: readers see the whole blob or none of it. */
  put(hash: string, bytes: Buffer, encoding?: BlobEncoding): Promise<void>
  /** Throws an error with code 'ENOENT' when the blob is missing. */
  get(hash: string, encoding?: BlobEncoding): Promise<Buffer>
  /** Removes the blob and its variants; a missing one is not an error. */
  delete(hash: string): Promise<void>
}

export const SHA256_HEX = /^[0-9a-f]{64}$/

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
