/**
 * A served version prepared for the hot path: path -> file Map, and per (file, encoding) header
 * lists built once on first use and then reused for every response.
 */
import { createHash } from 'node:crypto'
import { type BlobEncoding, SHA256_HEX } from '../blobs/blob-store.ts'
import { contentTypeHeader, isCompressible } from '../core/media-types.ts'
import { siteLabel } from '../core/site-address.ts'
import { HEADERS_FILE, type HeaderList, type HeaderRules, headersFor, NO_HEADERS } from '../publishing/header-rules.ts'
import { REDIRECTS_FILE, type RedirectRules } from '../publishing/redirect-rules.ts'
import { TEMPLATE_DIR } from '../publishing/template-rules.ts'
import type { ServedEncoding } from './http-conditionals.ts'
import { CACHE_REVALIDATE, NOINDEX_HEADERS, SITE_SECURITY_HEADERS } from './security-headers.ts'
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
  preview: boolean
  /** The host label: `slug`, or `slug--vN` for a preview. */
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

/** Builds the prepared form of a version. Files with an invalid hash or size are left out and reported. */
export function prepareVersion(version: ServedVersion, preview: boolean, onInvalid?: (file: ServedFile) => void): PreparedLoad {
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
    preview,
    label: siteLabel(version.slug, preview ? version.number : null),
    files,
    templates,
    notFound: files.get('404.html') ?? null,
    recheckAt: Infinity,
    lockedSince: version.lockedSince ?? null,
    redirects: null,
    headerRules: null,
    headerMemo: new Map(),
  }
  return { version: prepared, ruleFiles, variantsPending }
}

/** Request paths whose `_headers` result is remembered per version, and the longest one remembered. */
export const HEADER_MEMO_LIMIT = 2048
export const HEADER_MEMO_PATH_CHARS = 256

/** What the version's `_headers` adds to answers for this decoded request path (none when it has no `_headers`). */
export function siteHeadersFor(version: PreparedVersion, pathname: string): HeaderList {
  const rules = version.headerRules
  if (rules === null) return NO_HEADERS
  const memo = version.headerMemo
  let found = memo.get(pathname)
  if (found === undefined) {
    found = headersFor(rules, pathname)
    // Longer paths are worked out each time: a flood of long random paths costs no memory.
    if (pathname.length > HEADER_MEMO_PATH_CHARS) return found
    if (memo.size >= HEADER_MEMO_LIMIT) memo.clear()
    memo.set(pathname, found)
  }
  return found
}

/** Headers Plinth sets that a `_headers` value replaces rather than joins (the rest are added). */
const REPLACEABLE = new Set(['cache-control', 'referrer-policy', 'x-robots-tag'])

const merged = new WeakMap<readonly string[], WeakMap<HeaderList, string[]>>()

/**
 * A header list with the site's own `_headers` values: Cache-Control, Referrer-Policy and
 * X-Robots-Tag replace Plinth's (a preview keeps its noindex), anything else is added; a site's
 * Content-Security-Policy is so sent as a second policy, which browsers enforce beside Plinth's.
 * Only headers that cannot weaken the site's protection get this far (header-rules.ts refuses the
 * others at publish). Remembered per (list, additions), both of which are built once and reused.
 */
export function withSiteHeaders(base: string[], extra: HeaderList, preview: boolean): string[] {
  if (extra.length === 0) return base
  let byExtra = merged.get(base)
  if (byExtra === undefined) merged.set(base, (byExtra = new WeakMap()))
  const hit = byExtra.get(extra)
  if (hit !== undefined) return hit
  const out = mergeSiteHeaders(base, extra, preview)
  byExtra.set(extra, out)
  return out
}

/** withSiteHeaders for a list built for one answer (a range), which nothing would look up again. */
export function mergeSiteHeaders(base: string[], extra: HeaderList, preview: boolean): string[] {
  if (extra.length === 0) return base
  const out = base.slice()
  for (const [name, value] of extra) {
    const lower = name.toLowerCase()
    if (REPLACEABLE.has(lower)) {
      if (lower === 'x-robots-tag' && preview) continue
      const at = indexOfHeader(out, lower)
      if (at !== -1) {
        out[at + 1] = value
        continue
      }
    }
    out.push(name, value)
  }
  return out
}

function indexOfHeader(list: string[], lower: string): number {
  for (let i = 0; i < list.length; i += 2) if (list[i]!.toLowerCase() === lower) return i
  return -1
}

/** The variant to send for the client's acceptable encodings (identity when nothing else fits). */
export function chooseVariant(file: PreparedFile, acceptable: readonly ServedEncoding[]): PreparedVariant {
  for (let i = 0; i < acceptable.length; i++) {
    const encoding = acceptable[i]
    if (encoding === 'br') {
      if (file.br !== null) return file.br
    } else if (encoding === 'gzip') {
      if (file.gzip !== null) return file.gzip
    } else {
      return file.identity
    }
  }
  return file.identity
}

function tail(file: PreparedFile, version: PreparedVersion, out: string[]): string[] {
  if (file.vary) out.push('Vary', 'Accept-Encoding')
  out.push(...SITE_SECURITY_HEADERS)
  if (version.preview) out.push(...NOINDEX_HEADERS)
  return out
}

function encodingHeader(v: PreparedVariant, out: string[]): void {
  if (v.encoding !== 'identity') out.push('Content-Encoding', v.encoding)
}

/** Headers of a 200 (and HEAD) response for this variant. */
export function okHeaders(file: PreparedFile, v: PreparedVariant, version: PreparedVersion): string[] {
  if (v.ok !== null) return v.ok
  const out = ['Content-Type', file.contentType, 'Content-Length', String(v.size), 'ETag', v.etag]
  encodingHeader(v, out)
  out.push('Cache-Control', file.cacheControl, 'Accept-Ranges', 'bytes')
  return (v.ok = tail(file, version, out))
}

/** Headers of a 304 response for this variant. */
export function notModifiedHeaders(file: PreparedFile, v: PreparedVariant, version: PreparedVersion): string[] {
  if (v.notModified !== null) return v.notModified
  return (v.notModified = tail(file, version, ['ETag', v.etag, 'Cache-Control', file.cacheControl]))
}

/** Headers when this file is sent as the version's 404 page (no validators, no ranges). */
export function missingHeaders(file: PreparedFile, v: PreparedVariant, version: PreparedVersion): string[] {
  if (v.missing !== null) return v.missing
  const out = ['Content-Type', file.contentType, 'Content-Length', String(v.size)]
  encodingHeader(v, out)
  out.push('Cache-Control', CACHE_REVALIDATE)
  return (v.missing = tail(file, version, out))
}

/** Headers of a 206 response (built per request: ranges are not the hot path). */
export function partialHeaders(file: PreparedFile, version: PreparedVersion, start: number, end: number): string[] {
  const v = file.identity
  const out = ['Content-Type', file.contentType, 'Content-Length', String(end - start + 1)]
  out.push('Content-Range', `bytes ${start}-${end}/${v.size}`, 'ETag', v.etag)
  out.push('Cache-Control', file.cacheControl, 'Accept-Ranges', 'bytes')
  return tail(file, version, out)
}

/** Headers of a 416 response. */
export function unsatisfiableHeaders(file: PreparedFile, version: PreparedVersion): string[] {
  const out = ['Content-Range', `bytes */${file.identity.size}`, 'Content-Length', '0']
  out.push('ETag', file.identity.etag, 'Cache-Control', file.cacheControl, 'Accept-Ranges', 'bytes')
  return tail(file, version, out)
}

/** Headers of a redirect (whatever its status) to `location`. */
export function redirectHeaders(version: PreparedVersion, location: string): string[] {
  const out = ['Location', location, 'Content-Length', '0', 'Cache-Control', CACHE_REVALIDATE]
  out.push(...SITE_SECURITY_HEADERS)
  if (version.preview) out.push(...NOINDEX_HEADERS)
  return out
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i

/** The path and query of a request target (absolute-form `http://host/path` too), null when it is neither form. */
function originForm(target: string): string | null {
  if (target.charCodeAt(0) === 47 /* / */) return target
  const origin = ABSOLUTE_FORM.exec(target)
  if (origin === null) return null
  const url = target.slice(origin[0].length)
  return url.charCodeAt(0) === 47 ? url : `/${url}`
}

/** No file at the path (a 404, unless content or a rule answers it). */
export const MISSING = 1

/** A request target taken apart once per request: what resolving it and matching rules read. */
export interface RequestTarget {
  /** The origin-form target, query included (`/path?q`). */
  url: string
  /** The path as sent, still percent-encoded. */
  raw: string
  /** The path decoded, as files are named and rules matched. */
  pathname: string
  /** The query with its `?`, or ''. */
  search: string
}

/**
 * A request target in origin or absolute form, taken apart and decoded; null for one that is
 * refused (400): neither form, bad percent-encoding, a NUL, a backslash or a `..` segment.
 */
export function parseTarget(target: string): RequestTarget | null {
  const url = originForm(target)
  if (url === null) return null
  const q = url.indexOf('?')
  const raw = q === -1 ? url : url.slice(0, q)
  let pathname = raw
  if (raw.includes('%')) {
    try {
      pathname = decodeURIComponent(raw)
    } catch {
      return null
    }
    if (pathname.includes('\0')) return null
  }
  if (pathname.includes('\\')) return null
  if (pathname.includes('..')) {
    const segments = pathname.split('/')
    for (let i = 0; i < segments.length; i++) if (segments[i] === '..') return null
  }
  return { url, raw, pathname, search: q === -1 ? '' : url.slice(q) }
}

/**
 * Resolves a request target against a version: the file to send, a redirect location (string:
 * `/dir` to `/dir/`) or MISSING. The query string is ignored, and kept on redirects.
 */
export function resolveTarget(version: PreparedVersion, target: RequestTarget): PreparedFile | string | typeof MISSING {
  const { pathname: path, raw, search } = target
  const files = version.files
  const directory = path.charCodeAt(path.length - 1) === 47
  const key = directory ? `${path.slice(1)}index.html` : path.slice(1)
  const exact = files.get(key)
  if (exact !== undefined) return exact
  if (directory) return MISSING
  const html = files.get(`${key}.html`)
  if (html !== undefined) return html
  if (files.has(`${key}/index.html`)) {
    // Never emit a protocol-relative Location (//host/...): collapse leading slashes.
    return `/${raw.replace(/^\/+/, '')}/${search}`
  }
  return MISSING
}
