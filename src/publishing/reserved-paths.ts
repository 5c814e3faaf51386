/**
 * Which site paths a collection owns. A collection named `posts` serves its entries at
 * `/posts-{slug}` and may serve a listing and feeds, so at the root of the site it reserves
 * `posts-*`, `posts`, `posts.html`, `posts/`, `posts.json` and `posts.xml`. Collection names have
 * no hyphen, so `/{collection}-{slug}` always splits at its first hyphen and two collections can
 * never claim the same path.
 */

/** Names Plinth keeps for its own site paths (asset library, templates, generated files). */
export const RESERVED_COLLECTION_NAMES: ReadonlySet<string> = new Set([
  'assets',
  'uploads',
  'library',
  'media',
  'templates',
  'template',
  'partials',
  'layouts',
  'collections',
  'entries',
  'content',
  'api',
  'static',
  'index',
  'sitemap',
  'robots',
  'feed',
  'rss',
  'atom',
  'search',
  'preview',
  'admin',
  'favicon',
  'manifest',
  'well',
])

const EXACT_SUFFIXES = ['', '.html', '.json', '.xml'] as const

/** The root paths a collection reserves, for display (`posts-*`, `posts`, ...). */
export function reservedPathsOf(name: string): string[] {
  return [`${name}-*`, ...EXACT_SUFFIXES.map((s) => `${name}${s}`), `${name}/`]
}

/** The collection whose reserved paths contain a bundle path, if any. */
export function collectionOwning(path: string, collectionNames: Iterable<string>): string | null {
  const first = path.split('/')[0]!
  for (const name of collectionNames) {
    if (first.startsWith(`${name}-`)) return name
    if (EXACT_SUFFIXES.some((s) => first === `${name}${s}`)) return name
  }
  return null
}

/**
 * Why a file may not be published at `path` (it lies where a collection serves its entries,
 * listing or feeds), or null when it may. Used by the publish check (violation RESERVED_PATH).
 */
export function reservedPathProblem(path: string, collectionNames: Iterable<string>): string | null {
  const name = collectionOwning(path, collectionNames)
  if (name === null) return null
  return `"${path}" lies where the collection "${name}" serves its entries (/${name}-{slug}), listing or feeds (${reservedPathsOf(name).join(', ')}): rename or move the file.`
}
