/**
 * The header list of each answer a file of a version gives: 200 (and HEAD), 304 and the 404 page
 * are built once per variant and kept on it; 206 and 416 (ranges, never the hot path) and
 * redirects are built per answer.
 */
import { NOINDEX_HEADERS, CACHE_REVALIDATE, SITE_SECURITY_HEADERS } from './security-headers.ts'
import type { PreparedFile, PreparedVariant, PreparedVersion } from './site-version.ts'

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
