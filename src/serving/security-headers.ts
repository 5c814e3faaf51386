/**
 * Response headers shared by every site response, content-type helpers and the built-in pages
 * (404/400/405/500). Everything here is computed once at module load.
 */
import type { ServerResponse } from 'node:http'
import { escapeHtml } from '../core/html.ts'
import { SITE_CONTENT_SECURITY_POLICY } from '../core/site-policy.ts'

/** Security headers sent on every site response, as a flat [name, value, ...] list. */
export const SITE_SECURITY_HEADERS: readonly string[] = Object.freeze([
  'Content-Security-Policy',
  SITE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options',
  'nosniff',
  'Referrer-Policy',
  'strict-origin-when-cross-origin',
])

/** Cache-Control of every published file (and of a bundle's own 404.html). */
export const CACHE_REVALIDATE = 'public, max-age=0, must-revalidate'

/** Sent on preview hosts and on built-in pages. */
export const NOINDEX_HEADERS: readonly string[] = Object.freeze(['X-Robots-Tag', 'noindex'])

export interface BuiltinPage {
  status: number
  body: Buffer
  /** Complete header list for res.writeHead (Content-Length matches body). */
  headers: readonly string[]
}

/** A small HTML page: a heading and paragraphs of text (escaped). */
export function htmlPage(title: string, ...paragraphs: string[]): string {
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title>` +
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1rem;color:#222}' +
    'h1{font-size:1.5rem}p{color:#555}</style></head>' +
    `<body><h1>${escapeHtml(title)}</h1>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}</body></html>\n`
  )
}

/** A fixed page: `no-store`, the security headers and noindex (built-in pages, and a site owner's error pages). */
export function builtin(status: number, contentType: string, text: string, extra: readonly string[] = []): BuiltinPage {
  const body = Buffer.from(text, 'utf8')
  const headers = Object.freeze([
    'Content-Type',
    contentType,
    'Content-Length',
    String(body.length),
    'Cache-Control',
    'no-store',
    ...extra,
    ...SITE_SECURITY_HEADERS,
    ...NOINDEX_HEADERS,
  ])
  return Object.freeze({ status, body, headers })
}

const HTML = 'text/html; charset=utf-8'
const TEXT = 'text/plain; charset=utf-8'

/** Sends a fixed page (its body unless the request is HEAD). */
export function sendPage(res: ServerResponse, page: BuiltinPage, head: boolean): void {
  res.writeHead(page.status, page.headers as string[])
  if (head) res.end()
  else res.end(page.body)
}

/** Unknown slug or version. */
export const NO_SITE_PAGE = builtin(404, HTML, htmlPage('Site not found', 'No site is published at this address.'))

/** A path missing from a version that has no 404.html of its own. */
export const PAGE_NOT_FOUND_PAGE = builtin(404, HTML, htmlPage('Page not found', 'There is no page at this address on this site.'))

export const BAD_REQUEST_PAGE = builtin(400, TEXT, 'Bad request: invalid path.\n')

/** A service worker's script request (it carries `Service-Worker: script`): published sites have no service workers. */
export const SERVICE_WORKER_REFUSED_PAGE = builtin(403, TEXT, 'Forbidden: service workers are not allowed on published sites.\n')

export const METHOD_NOT_ALLOWED_PAGE = builtin(405, TEXT, 'Method not allowed: use GET or HEAD.\n', ['Allow', 'GET, HEAD'])
/** The same, for the paths a site takes posts on (its forms, its password form). */
export const POST_PATH_METHOD_NOT_ALLOWED_PAGE = builtin(405, TEXT, 'Method not allowed: use GET, HEAD or POST.\n', ['Allow', 'GET, HEAD, POST'])

export const SERVER_ERROR_PAGE = builtin(500, HTML, htmlPage('Something went wrong', 'This page could not be served right now. Please try again shortly.'))
