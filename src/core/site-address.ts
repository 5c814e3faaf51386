/** Slug rules: shape, reserved words, normalization of names, and finding a free variant. */

export const SLUG_MIN = 3
export const SLUG_MAX = 50
const SHAPE = /^[a-z][a-z0-9-]*$/

/** Host labels that would shadow the service itself; they count as taken. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'www', 'api', 'app', 'admin', 'mcp', 'docs', 'static', 'assets', 'mail', 'status', 'dashboard',
  'plinth', 'login', 'signin', 'signup', 'account', 'auth', 'oauth', 'help', 'support', 'blog',
  'cdn', 'files', 'media', 'smtp', 'imap', 'pop', 'ftp', 'ns1', 'ns2', 'localhost', 'test',
])

/** Why a requested slug is malformed, or null when it is well-formed. */
export function slugProblem(slug: string): string | null {
  if (slug.length < SLUG_MIN || slug.length > SLUG_MAX) return `must be ${SLUG_MIN} to ${SLUG_MAX} characters`
  if (!SHAPE.test(slug)) return 'must start with a lowercase letter and contain only lowercase letters, digits and hyphens'
  if (slug.includes('--')) return 'must not contain "--" (it marks preview addresses such as my-site--v2)'
  if (slug.endsWith('-')) return 'must not end with a hyphen'
  return null
}

/**
 * Normalizes free text (a site name or a draft slug) toward a slug: lowercase ASCII, accents
 * dropped, every run of other characters turned into one hyphen, trimmed to the maximum length.
 * The result may still be too short or start with a digit; slugProblem says so.
 */
export function normalizeSlug(input: string): string {
  return input
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '')
}

/** A well-formed base for derived slugs: never invalid, whatever the input. */
export function slugBase(input: string, fallback = 'site'): string {
  let base = normalizeSlug(input)
  if (!/^[a-z]/.test(base)) base = base ? `${fallback}-${base}` : fallback
  if (base.length < SLUG_MIN) base = `${base}-${fallback}`
  return base.slice(0, SLUG_MAX).replace(/-+$/, '')
}

/**
 * The first free slug among base, base-2, base-3, ...: `taken` lists slugs already used that
 * start with base (the caller loads them in one query). Reserved words count as taken.
 */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  const isFree = (slug: string) => !taken.has(slug) && !RESERVED_SLUGS.has(slug)
  if (isFree(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '') + suffix
    if (isFree(candidate)) return candidate
  }
}
