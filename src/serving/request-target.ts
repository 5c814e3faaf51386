/**
 * Request targets of site requests: taken apart and decoded once per request (refusing what could
 * escape the site's files), and resolved against a version's files.
 */
import type { PreparedFile } from './site-version.ts'

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
 * `/dir` to `/dir/`) or MISSING. The query string is ignored, and kept on redirects. The site
 * check (site-check/site-paths.ts) resolves a bundle's links with it too, by their files' paths.
 */
export function resolveTarget<F = PreparedFile>(
  version: { files: ReadonlyMap<string, F> },
  target: Pick<RequestTarget, 'pathname' | 'raw' | 'search'>,
): F | string | typeof MISSING {
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
