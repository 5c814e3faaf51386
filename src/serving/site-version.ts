/**
 * A served version prepared for the hot path: path -> file Map, each file with its variants (the
 * bytes as stored, br, gzip) and a slot per answer for the header list built once on first use
 * (response-headers.ts) and then reused for every response.
 */
import { createHash } from 'node:crypto'
import { type BlobEncoding, SHA256_HEX } from '../blobs/blob-store.ts'
import { contentTypeHeader, isCompressible } from '../core/media-types.ts'
import { HEADERS_FILE, type HeaderList, type HeaderRules } from '../publishing/header-rules.ts'
import { REDIRECTS_FILE, type RedirectRules } from '../publishing/redirect-rules.ts'
import { TEMPLATE_DIR } from '../publishing/template-rules.ts'
import { CACHE_REVALIDATE } from './security-headers.ts'
import type { ServedFile, ServedVersion } from './site-lookup.ts'

export interface PreparedVariant {
  encoding: BlobEncoding
  hash: string
  /** Blob cache key: hash + encoding. */
  key: string
  size: number
  etag: string
  /** The bytes themselves when they live in memory (a rendered content page), else null (read from the blob store). */
  bytes: Buffer | null
  /** 200 headers (also HEAD), built on first use. */
  ok: string[] | null
  /** 304 headers, built on first use. */
  notModified: string[] | null
  /** Headers when this file is served as the version's 404 page, built on first use. */
  missing: string[] | null
}

export interface PreparedFile {
  path: string
  contentType: string
  cacheControl: string
  /** Whether responses carry Vary: Accept-Encoding. */
  vary: boolean
  identity: PreparedVariant
  br: PreparedVariant | null
  gzip: PreparedVariant | null
}

export interface PreparedVersion {
  websiteId: string
  slug: string
  versionId: string
  number: number
  /** Served at a preview's host (a version's or a draft's): never indexed. */
  preview: boolean
  /** The host label: `slug`, or `slug--vN` or `slug--d{token}` for a preview. */
  label: string
  /** The files served at their paths (never those under `_templates/`). */
  files: Map<string, PreparedFile>
  /** The version's templates (`_templates/…`, keyed by their full path): read by content pages, never served. */
  templates: Map<string, PreparedFile>
  /** The bundle's own 404.html, if any. */
  notFound: PreparedFile | null
  /**
   * When the cache reads the version again (ms): soon while some file's compressed variants are
   * still being made, else never (Infinity). Set by the cache.
   */
  recheckAt: number
  /** When the site's password was set (unlock cookies are bound to it); null when the site is open. */
  lockedSince: string | null
  /** The forms this version declares: the only ones its hosts take posts to. */
  forms: ReadonlySet<string>
  /** The parsed `_redirects`, null when the bundle has none. */
  redirects: RedirectRules | null
  /** The parsed `_headers`, null when the bundle has none. */
  headerRules: HeaderRules | null
  /** Request path -> what `_headers` adds to its answers, worked out once per path (bounded). */
  headerMemo: Map<string, HeaderList>
}

function variant(hash: string, encoding: BlobEncoding, size: number, bytes: Buffer | null = null): PreparedVariant {
  const suffix = encoding === 'identity' ? '' : encoding === 'br' ? '-br' : '-gz'
  return {
    encoding,
    hash,
    key: encoding === 'identity' ? hash : `${hash}.${encoding}`,
    size,
    etag: `"${hash.slice(0, 40)}${suffix}"`,
    bytes,
    ok: null,
    notModified: null,
    missing: null,
  }
}

function validSize(size: unknown): size is number {
  return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0
}

function prepareFile(file: ServedFile): PreparedFile | null {
  if (typeof file.hash !== 'string' || !SHA256_HEX.test(file.hash) || !validSize(file.size)) return null
  const br = validSize(file.brSize) ? variant(file.hash, 'br', file.brSize) : null
  const gzip = validSize(file.gzipSize) ? variant(file.hash, 'gzip', file.gzipSize) : null
  return preparedFile(file.path, String(file.contentType ?? ''), CACHE_REVALIDATE, variant(file.hash, 'identity', file.size), br, gzip)
}

function preparedFile(
  path: string,
  contentType: string,
  cacheControl: string,
  identity: PreparedVariant,
  br: PreparedVariant | null,
  gzip: PreparedVariant | null,
): PreparedFile {
  return {
    path,
    contentType: contentTypeHeader(contentType),
    cacheControl,
    vary: br !== null || gzip !== null || isCompressible(contentType),
    identity,
    br,
    gzip,
  }
}

/**
 * A file whose bytes are in memory (a rendered content page) with its precompressed variants:
 * served exactly like a published file (validators, Vary, ranges, HEAD, 304).
 */
export function memoryFile(path: string, contentType: string, bytes: Buffer, br: Buffer | null, gzip: Buffer | null): PreparedFile {
  const hash = createHash('sha256').update(bytes).digest('hex')
  return preparedFile(
    path,
    contentType,
    CACHE_REVALIDATE,
    variant(hash, 'identity', bytes.length, bytes),
    br === null ? null : variant(hash, 'br', br.length, br),
    gzip === null ? null : variant(hash, 'gzip', gzip.length, gzip),
  )
}

/** A blob of the store served as a file with no precompressed variants (a library image). */
export function storedFile(path: string, contentType: string, hash: string, size: number, cacheControl: string): PreparedFile {
  return preparedFile(path, contentType, cacheControl, variant(hash, 'identity', size), null, null)
}

/** A version as prepareVersion builds it, with what the cache needs to finish it. */
export interface PreparedLoad {
  version: PreparedVersion
  /** The bundle's `_redirects` and `_headers`: parsed by the cache into the version, never served. */
  ruleFiles: { redirects: PreparedFile | null; headers: PreparedFile | null }
  /** Some file's compressed variants are still being made. */
  variantsPending: boolean
}

/**
 * Builds the prepared form of a version, as served at the host `label` (a preview's or the live
 * site's). Files with an invalid hash or size are left out and reported.
 */
export function prepareVersion(version: ServedVersion, at: { label: string; preview: boolean }, onInvalid?: (file: ServedFile) => void): PreparedLoad {
  const files = new Map<string, PreparedFile>()
  const templates = new Map<string, PreparedFile>()
  let variantsPending = false
  const ruleFiles: PreparedLoad['ruleFiles'] = { redirects: null, headers: null }
  for (const file of version.files) {
    if (file.variantsPending === true) variantsPending = true
    const prepared = prepareFile(file)
    if (prepared === null) {
      onInvalid?.(file)
      continue
    }
    let path = String(file.path)
    while (path.startsWith('/')) path = path.slice(1)
    prepared.path = path
    // The templates folder is read by content pages, and is a 404 like any missing page.
    if (path.startsWith(TEMPLATE_DIR)) templates.set(path, prepared)
    else if (path === REDIRECTS_FILE) ruleFiles.redirects = prepared
    else if (path === HEADERS_FILE) ruleFiles.headers = prepared
    else files.set(path, prepared)
  }
  const prepared: PreparedVersion = {
    websiteId: version.websiteId,
    slug: version.slug,
    versionId: version.versionId,
    number: version.number,
    preview: at.preview,
    label: at.label,
    files,
    templates,
    notFound: files.get('404.html') ?? null,
    recheckAt: Infinity,
    lockedSince: version.lockedSince ?? null,
    forms: new Set(version.forms ?? []),
    redirects: null,
    headerRules: null,
    headerMemo: new Map(),
  }
  return { version: prepared, ruleFiles, variantsPending }
}
