/**
 * UNUSED_FILE: a file of the bundle that no page, stylesheet, script or `_redirects` rule links,
 * loads or imports, and that no script or attribute names by its path (as scripts that fetch
 * their data do). Files a site has for others than its own pages are never reported:
 *
 * - the site's entry points and Plinth's own files: `index.html`, `404.html`, `thanks.html`
 *   (the forms' thank-you page), `_redirects`, `_headers`, and everything under `_templates/`;
 * - what browsers, crawlers and other services ask for by name: `robots.txt`, `sitemap.xml`,
 *   `favicon.ico`, `humans.txt`, `ads.txt`, `app-ads.txt`, `security.txt`, `browserconfig.xml`,
 *   `crossdomain.xml`, `CNAME`, and everything under `.well-known/`;
 * - web app manifests (`manifest.json`, `*.webmanifest`) and the icons named after their
 *   conventions (`favicon-*`, `apple-touch-icon*`, `android-chrome-*`, `mstile-*`,
 *   `safari-pinned-tab.svg`);
 * - search engines' ownership files (`google*.html`, `BingSiteAuth.xml`, `yandex_*.html`);
 * - source maps (`*.map`) beside the file they map.
 *
 * At any depth for the names above; the check is skipped when a file had more addresses than the
 * check keeps (CHECK_INCOMPLETE), since a file it did not see named may be used.
 */
import type { Warning } from '../core/schemas.ts'

const WELL_KNOWN_NAMES = new Set([
  'index.html',
  '404.html',
  'thanks.html',
  '_redirects',
  '_headers',
  'robots.txt',
  'sitemap.xml',
  'favicon.ico',
  'humans.txt',
  'ads.txt',
  'app-ads.txt',
  'security.txt',
  'browserconfig.xml',
  'crossdomain.xml',
  'CNAME',
  'manifest.json',
  'safari-pinned-tab.svg',
  'BingSiteAuth.xml',
])
const WELL_KNOWN_PATTERNS = [/\.webmanifest$/, /^(?:favicon-|apple-touch-icon|android-chrome-|mstile-)/, /^google[0-9a-f]+\.html$/, /^yandex_[0-9a-f]+\.html$/]
const WELL_KNOWN_FOLDERS = ['.well-known/', '_templates/']

/** Whether a file is one a site has for others than its own pages (see above). */
export function isWellKnown(path: string, paths: ReadonlySet<string>): boolean {
  if (WELL_KNOWN_FOLDERS.some((folder) => path.startsWith(folder))) return true
  const name = path.slice(path.lastIndexOf('/') + 1)
  if (WELL_KNOWN_NAMES.has(name) || WELL_KNOWN_PATTERNS.some((pattern) => pattern.test(name))) return true
  return name.endsWith('.map') && paths.has(path.slice(0, -'.map'.length))
}

/** A mention's path without what leads up to the site root (`./`, `../`, `/`) and without its query or fragment. */
function mentionKey(mention: string): string {
  return mention.replace(/[?#].*$/, '').replace(/^(?:\.{1,2}\/|\/)+/, '')
}

/**
 * The UNUSED_FILE warnings of a bundle (files in bundle order): a file is used when `used` holds
 * it, or a mention names it by its path or by a trailing part of it (`data/menu.json` names
 * `site/data/menu.json`).
 */
export function unusedFiles(files: readonly string[], used: ReadonlySet<string>, mentions: Iterable<string>): Warning[] {
  const named = new Set<string>()
  for (const mention of mentions) named.add(mentionKey(mention))
  const paths = new Set(files)
  const unused: Warning[] = []
  for (const path of files) {
    if (used.has(path) || isWellKnown(path, paths)) continue
    const segments = path.split('/')
    if (segments.some((_, i) => named.has(segments.slice(i).join('/')))) continue
    unused.push({
      code: 'UNUSED_FILE',
      path,
      message: `Nothing on the site links, loads or names ${path}: link it from a page, or remove it from the bundle.`,
    })
  }
  return unused
}
