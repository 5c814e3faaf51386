/**
 * The data source the site server reads published versions from. Implemented elsewhere over the
 * database; the serving module only depends on this interface.
 */

export interface ServedFile {
  /** Path inside the site, without a leading slash: `index.html`, `about/index.html`. */
  path: string
  /** SHA-256 hex of the identity bytes: the blob name. */
  hash: string
  /** Byte length of the identity bytes. */
  size: number
  /** Bare media type, e.g. `text/html` (no parameters). */
  contentType: string
  /** Byte length of the precompressed brotli variant, null when there is none. */
  brSize: number | null
  /** Byte length of the precompressed gzip variant, null when there is none. */
  gzipSize: number | null
}

export interface ServedVersion {
  websiteId: string
  slug: string
  versionId: string
  number: number
  files: ServedFile[]
}

export interface SiteLookup {
  /** The live version of the site with this slug, null when there is none. */
  findLive(slug: string): Promise<ServedVersion | null>
  /** Version `number` of the site with this slug (live or not), null when there is none. */
  findVersion(slug: string, number: number): Promise<ServedVersion | null>
}
