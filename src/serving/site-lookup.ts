/**
 * The data source the site server reads published versions (and drafts' current files) from.
 * Implemented elsewhere over the database; the serving module only depends on this interface.
 */

import type { StoredFile } from '../blobs/blob-store.ts'

/** A file of a served version, with the precompressed variants its blob has. */
export interface ServedFile extends StoredFile {
  /** Byte length of the precompressed brotli variant, null when there is none. */
  brSize: number | null
  /** Byte length of the precompressed gzip variant, null when there is none. */
  gzipSize: number | null
  /** True while the blob's variants are still being made (blobs/blob-variants.ts): served uncompressed until then. */
  variantsPending?: boolean
}

export interface ServedVersion {
  websiteId: string
  slug: string
  /**
   * Names these very files: caches of pages and templates are keyed by it. A version's id; for a
   * draft, its id with a digest of its files, so that every change of the draft gets another one.
   */
  versionId: string
  /** The version's number; a draft's base version's. */
  number: number
  files: ServedFile[]
  /** When the site's password was set; null (or absent) when the site is open to everyone. */
  lockedSince?: string | null
  /** The names of the forms its pages declare (none for a draft's preview). */
  forms?: readonly string[]
  /** From when it is no longer served (a draft's expiry); null (or absent) when it is served as long as it exists. */
  expiresAt?: string | null
}

export interface SiteLookup {
  /** The live version of the site with this slug, null when there is none. */
  findLive(slug: string): Promise<ServedVersion | null>
  /** Version `number` of the site with this slug (live or not), null when there is none. */
  findVersion(slug: string, number: number): Promise<ServedVersion | null>
  /** The draft `draftId` of the site with this slug, with its current files; null when that site has no such draft. */
  findDraft(slug: string, draftId: string): Promise<ServedVersion | null>
}
