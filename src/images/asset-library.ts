/**
 * The image library of a site: images of entries (and imported one by one) are copied here, so
 * pages never hotlink other servers. One library per collection, plus a site-wide one
 * (collectionId null). A URL is fetched once per library: a known URL returns the stored asset.
 * Bytes go to the content-addressed blob store, so identical images are stored once whatever
 * their URLs. Every fetch goes through safeFetch (SSRF-safe) and every image is sniffed from its
 * bytes: only PNG, JPEG, GIF, WebP and AVIF are kept.
 */
import { createHash } from 'node:crypto'
import type { BlobStore } from '../blobs/blob-store.ts'
import type { BlobVariants } from '../blobs/blob-variants.ts'
import { storeBlob } from '../blobs/blob-writes.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { AppError, type ErrorCode } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { formatSize, URL_MAX_CHARS } from '../core/limits.ts'
import { quoted } from '../core/text.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { AssetRow } from '../db/types.ts'
import { safeFetch } from '../net/safe-fetch.ts'
import type { AssetsRepository } from './assets.repository.ts'
import { type ImageType, LIBRARY_PATH, libraryPath, sniffImage } from './image-type.ts'

export interface LibraryAsset {
  id: string
  /** Where the site serves it, site-relative: /_assets/{hash}.{ext} */
  url: string
  sourceUrl: string | null
  contentType: string
  size: number
  hash: string
  width: number | null
  height: number | null
}

const ASSET_FETCH_LIMITS = { connectTimeoutMs: 5_000, totalTimeoutMs: 20_000, maxRedirects: 5 }
const ACCEPT = 'image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1'
const DATA_URL = /^data:/i

export interface AssetLibraryOptions {
  /** Hosts exempt from the public-address rule (PLINTH_FETCH_ALLOW_HOSTS). */
  allowHosts: ReadonlySet<string>
  /** `Plinth/1.0 (+{site_url})` */
  userAgent: string
  /** Certificate authorities trusted on top of the system's (PLINTH_FETCH_CA_FILE). */
  ca?: string
  repo: AssetsRepository
  blobs: BlobStore
  blobRows: BlobsRepository
  blobVariants: BlobVariants
  /** Largest image kept: a bundle file's size limit (config.bundleLimits.maxFileBytes). */
  maxImageBytes: number
}

const assetView = (row: AssetRow): LibraryAsset => ({
  id: row.id,
  url: libraryPath(row.hash, row.content_type),
  sourceUrl: row.source_url,
  contentType: row.content_type,
  size: Number(row.size),
  hash: row.hash,
  width: row.width,
  height: row.height,
})

export class AssetLibrary {
  /** Imports under way, so the same URL asked for twice at once (two entries of a batch) is fetched once. */
  private readonly inFlight = new Map<string, Promise<LibraryAsset>>()

  constructor(private readonly options: AssetLibraryOptions) {}

  /** Once per (library, URL): a known URL returns the stored asset without fetching. Throws FETCH_FAILED. */
  importFromUrl(websiteId: string, collectionId: string | null, url: string): Promise<LibraryAsset> {
    // An inline image is bounded by the image size limit, not by the URL length limit.
    if (DATA_URL.test(url)) return this.importDataUrl(websiteId, collectionId, url)
    if (url.length > URL_MAX_CHARS) {
      return Promise.reject(new AppError('FETCH_FAILED', `The image URL is ${url.length} characters long; at most ${URL_MAX_CHARS} are accepted.`))
    }
    let source: string
    try {
      source = new URL(url).href
    } catch {
      return Promise.reject(new AppError('FETCH_FAILED', `${quoted(url)} is not an absolute URL.`))
    }
    const key = `${websiteId}\n${collectionId ?? ''}\n${source}`
    let pending = this.inFlight.get(key)
    if (!pending) {
      pending = this.fetchOnce(websiteId, collectionId, source).finally(() => this.inFlight.delete(key))
      this.inFlight.set(key, pending)
    }
    return pending
  }

  /** The image a library path (`/_assets/{hash}.{ext}`) names in any library of this website, or null. */
  async findByPath(websiteId: string, path: string): Promise<LibraryAsset | null> {
    const match = LIBRARY_PATH.exec(path)
    const row = match ? await this.options.repo.findServed(websiteId, match[1]!, match[2]!) : undefined
    return row ? assetView(row) : null
  }

  async importFromBytes(
    websiteId: string,
    collectionId: string | null,
    bytes: Buffer,
    options: { filename?: string; sourceUrl?: string | null },
  ): Promise<LibraryAsset> {
    const name = options.filename ? quoted(options.filename, 80) : 'The file'
    return this.keep(websiteId, collectionId, bytes, options.sourceUrl ?? null, name, 'VALIDATION_FAILED')
  }

  private async fetchOnce(websiteId: string, collectionId: string | null, source: string): Promise<LibraryAsset> {
    const known = await this.options.repo.findBySource(websiteId, collectionId, source)
    if (known) return assetView(known)
    const fetched = await safeFetch(source, {
      ...ASSET_FETCH_LIMITS,
      maxBytes: this.options.maxImageBytes,
      allowHosts: this.options.allowHosts,
      userAgent: this.options.userAgent,
      accept: ACCEPT,
      ca: this.options.ca,
    })
    return this.keep(websiteId, collectionId, fetched.bytes, source, `The image at ${quoted(source, 200)}`, 'FETCH_FAILED')
  }

  /**
   * Inline images (`data:image/png;base64,...`) are decoded, not fetched, and kept by their bytes;
   * whatever media type the URL declares, the bytes decide.
   */
  private async importDataUrl(websiteId: string, collectionId: string | null, url: string): Promise<LibraryAsset> {
    const what = 'The inline (data:) image'
    const comma = url.indexOf(',')
    if (comma === -1) throw new AppError('FETCH_FAILED', `${what} has no comma before its data; write data:image/png;base64,…`)
    const meta = url.slice(5, comma)
    const payload = url.slice(comma + 1)
    let bytes: Buffer
    if (/;base64$/i.test(meta)) bytes = Buffer.from(payload, 'base64')
    else {
      try {
        bytes = Buffer.from(decodeURIComponent(payload), 'utf8')
      } catch {
        throw new AppError('FETCH_FAILED', `${what} is not valid percent-encoded data; write data:image/png;base64,…`)
      }
    }
    return this.keep(websiteId, collectionId, bytes, null, what, 'FETCH_FAILED')
  }

  private async keep(
    websiteId: string,
    collectionId: string | null,
    bytes: Buffer,
    sourceUrl: string | null,
    what: string,
    code: ErrorCode,
  ): Promise<LibraryAsset> {
    const max = this.options.maxImageBytes
    if (bytes.length > max) throw new AppError(code, `${what} is ${bytes.length} bytes; images of at most ${max} bytes (${formatSize(max)}) are accepted.`)
    const type = await sniffImage(bytes)
    if ('problem' in type) throw new AppError(code, `${what} ${type.problem}.`)
    const hash = createHash('sha256').update(bytes).digest('hex')
    if (sourceUrl === null) {
      const same = await this.options.repo.findUnsourced(websiteId, collectionId, hash)
      if (same) return assetView(same)
    }
    await storeBlob(this.options.blobs, this.options.blobRows, this.options.blobVariants, hash, bytes, type.contentType)
    const row = assetRow(websiteId, collectionId, sourceUrl, hash, bytes.length, type)
    try {
      await this.options.repo.insert(row)
      return assetView(row)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      // Imported meanwhile by another request (another instance, or the same bytes uploaded twice).
      const winner =
        sourceUrl === null
          ? await this.options.repo.findUnsourced(websiteId, collectionId, hash)
          : await this.options.repo.findBySource(websiteId, collectionId, sourceUrl)
      if (!winner) throw error
      return assetView(winner)
    }
  }
}

function assetRow(websiteId: string, collectionId: string | null, sourceUrl: string | null, hash: string, size: number, type: ImageType): AssetRow {
  return {
    id: newId('ast'),
    website_id: websiteId,
    collection_id: collectionId,
    source_url: sourceUrl,
    hash,
    content_type: type.contentType,
    size,
    width: type.width,
    height: type.height,
    created_at: nowIso(),
  }
}
