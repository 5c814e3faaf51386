/**
 * Where an address in a bundle file leads once the site is served: resolved as a browser
 * resolves it (against the file's own address, or a page's `<base>` inside the site), then
 * answered as the site server answers it: a file of the bundle by the server's own rules
 * (serving/request-target.ts: `/about` is `about` or `about.html`, `/docs/` is
 * `docs/index.html`), else Plinth's own paths and the site's content (collections, sitemap.xml,
 * library images, forms), else a `_redirects` rule. Anything else is the site's 404.
 */
import { FORM_PATH_PREFIX } from '../core/form-names.ts'
import { matchRedirect, type RedirectRules } from '../publishing/redirect-rules.ts'
import { collectionOwning } from '../publishing/reserved-paths.ts'
import { MISSING, resolveTarget } from '../serving/request-target.ts'

/** The origin addresses are resolved against: no real site has it. */
const SITE_ORIGIN = 'https://site.invalid'

/** Where an address leads: out of the site, nowhere (a path no URL can be), or a site path and fragment. */
export type Resolved = { pathname: string; fragment: string | null } | 'elsewhere' | 'invalid'

/** The address of a bundle file, to resolve its relative addresses against. */
export function fileAddress(path: string): URL {
  // Bundle paths hold no "%", "?" or "#" (bundle-paths.ts): the URL parser escapes what else needs it.
  return new URL(`/${path}`, SITE_ORIGIN)
}

/** What relative addresses of a file resolve against: its own address, or a page's `<base href>` when that stays in the site. */
export function baseAddress(path: string, base: string | null): URL {
  const own = fileAddress(path)
  if (base === null) return own
  try {
    const url = new URL(base, own)
    // Browsers ignore a <base> on another origin (the policy's base-uri 'self'): the page's own address applies.
    return url.origin === SITE_ORIGIN ? url : own
  } catch {
    return own
  }
}

/** Where `url` leads from `base`: the decoded site path and fragment, as the server and the browser read them. */
export function resolveAddress(url: string, base: URL): Resolved {
  let resolved: URL
  try {
    resolved = new URL(url, base)
  } catch {
    return 'invalid'
  }
  if (resolved.origin !== SITE_ORIGIN) return 'elsewhere'
  let pathname: string
  try {
    pathname = decodeURIComponent(resolved.pathname)
  } catch {
    return 'invalid'
  }
  return { pathname, fragment: resolved.hash === '' ? null : resolved.hash.slice(1) }
}

/** The answer to a site path: the bundle file served, or another answer than a 404 (content, a rule), or none. */
export type Answer = { file: string } | 'answered' | null

/** A library image's path: `/_assets/{sha256}.{ext}` (images/image-type.ts). */
const LIBRARY_IMAGE = /^\/_assets\/[0-9a-f]{64}\.[a-z0-9]{1,5}$/

export class SitePaths {
  private readonly files: ReadonlyMap<string, { path: string }>

  constructor(
    paths: Iterable<string>,
    private readonly redirects: RedirectRules | null,
    private readonly collectionNames: readonly string[],
  ) {
    this.files = new Map([...paths].map((path) => [path, { path }]))
  }

  /** How the site answers a decoded path. */
  answer(pathname: string): Answer {
    const raw = encodeURI(pathname)
    const found = resolveTarget({ files: this.files }, { pathname, raw, search: '' })
    if (typeof found === 'object') return { file: found.path }
    // `/docs` is sent on to `/docs/`, which serves docs/index.html.
    if (found !== MISSING) return { file: `${pathname.slice(1)}/index.html` }
    if (pathname === '/sitemap.xml' || pathname.startsWith(FORM_PATH_PREFIX) || LIBRARY_IMAGE.test(pathname)) return 'answered'
    if (pathname.length > 1 && collectionOwning(pathname.slice(1), this.collectionNames) !== null) return 'answered'
    if (this.redirects !== null) {
      const rule = matchRedirect(this.redirects, pathname, '')
      // A 404 rule serves its target as not found: the link is still broken.
      if (rule !== null && rule.status !== 404) return 'answered'
    }
    return null
  }
}
