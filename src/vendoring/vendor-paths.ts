/**
 * Where the copy of an external file goes in the bundle: `_vendor/{host}/{path}`, the URL's own
 * path kept so that a stylesheet's relative references still mean what they meant. `{host}` is
 * the host name, followed by `_{port}` when the URL names a port. Each segment keeps letters,
 * digits and `. _ ~ @ + = ! -` (so `npm/highlight.js@11.9.0/...` reads as it did); any other
 * character becomes `_`. A URL with a query gets a short hash of it before the extension (Google
 * Fonts' `css2?family=...`), and a name whose extension does not say what the file is gets one
 * that does (a stylesheet served at `/css2` is stored as `css2-….css`), as the site serves each
 * file with the type its extension names. References to copies are written relative to the file
 * that holds them.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import mime from 'mime-types'
import { MAX_SEGMENT_BYTES } from '../core/limits.ts'
import type { ReferenceKind } from './vendor-references.ts'

/** The folder every copy goes under. */
export const VENDOR_FOLDER = '_vendor'

const SAFE = /[^A-Za-z0-9._~@+=!-]/g
const JS_TYPES = new Set(['text/javascript', 'application/javascript', 'application/x-javascript', 'application/ecmascript', 'text/ecmascript'])
/** The type a copy must have when the answer gives none worth keeping. */
const KIND_TYPES: Partial<Record<ReferenceKind, string>> = { script: 'text/javascript', style: 'text/css' }

const shortHash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 10)

/** The bare media type of an answer's Content-Type, or null when it says nothing useful. */
export function answeredType(contentType: string | null): string | null {
  const bare = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return bare === '' || bare === 'application/octet-stream' || bare === 'text/plain' || !bare.includes('/') ? null : bare
}

/** The type a copy is stored as: what the reference loads (a script, a stylesheet), else what the answer said, else its name's. */
export function copyType(kind: ReferenceKind, url: URL, contentType: string | null): string {
  const fixed = KIND_TYPES[kind]
  if (fixed) return fixed
  const answered = answeredType(contentType)
  if (answered === 'text/css') return answered
  return answered ?? (mime.lookup(url.pathname) || 'application/octet-stream')
}

/** The bundle path of a copy of `url` stored as `type` (before any collision is resolved: see uniquePath). */
export function vendorPath(url: URL, type: string): string {
  const host = `${safeSegment(url.hostname.replace(/^\[|\]$/g, ''))}${url.port ? `_${url.port}` : ''}`
  const segments = url.pathname.split('/').slice(1).map(decodeSegment)
  if (segments.length === 0 || segments[segments.length - 1] === '') segments[segments.length === 0 ? 0 : segments.length - 1] = 'index'
  const folders = segments.slice(0, -1).map((s) => (s === '' || s === '.' || s === '..' ? '_' : safeSegment(s)))
  let name = safeSegment(segments[segments.length - 1]!)
  const dot = name.lastIndexOf('.')
  let stem = dot > 0 ? name.slice(0, dot) : name
  let extension = dot > 0 ? name.slice(dot) : ''
  if (!extensionFits(extension, type)) {
    const wanted = mime.extension(type)
    if (wanted) {
      stem = name
      extension = `.${wanted}`
    }
  }
  if (url.search !== '') stem = `${stem}-${shortHash(url.search)}`
  name = `${stem}${extension}`
  if (name === '.' || name === '..') name = '_'
  return [VENDOR_FOLDER, host, ...folders, name].join('/')
}

/** `wanted` when no other URL took it, else the same name with a hash of the URL before the extension. */
export function uniquePath(wanted: string, url: string, taken: (path: string) => boolean): string {
  if (!taken(wanted)) return wanted
  const dot = wanted.lastIndexOf('.')
  const slash = wanted.lastIndexOf('/')
  const cut = dot > slash + 1 ? dot : wanted.length
  return `${wanted.slice(0, cut)}-${shortHash(url)}${wanted.slice(cut)}`
}

/** How a file at `from` (a bundle path) names the file at `to`. */
export function relativeReference(from: string, to: string): string {
  return path.posix.relative(path.posix.dirname(from), to)
}

function extensionFits(extension: string, type: string): boolean {
  if (extension === '') return false
  const named = mime.lookup(extension)
  if (named === false) return false
  return named === type || (JS_TYPES.has(named) && JS_TYPES.has(type))
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** A segment of safe characters, at most MAX_SEGMENT_BYTES long (a long one ends with a hash of the rest). */
function safeSegment(segment: string): string {
  const safe = segment.replace(SAFE, '_')
  return safe.length > MAX_SEGMENT_BYTES - 20 ? `${safe.slice(0, MAX_SEGMENT_BYTES - 32)}-${shortHash(safe)}` : safe || '_'
}
