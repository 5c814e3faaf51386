/**
 * A site's address: its slug (shape, reserved words, normalization of names, finding a free
 * variant), the host labels of a version's preview (`{slug}--v{n}`) and of a draft's preview
 * (`{slug}--d{token}`), and the page URLs built from them. Publishing, serving and the API all
 * follow these rules from here. No slug contains `--`, so no preview label is ever a slug.
 */

import transliterate from '@sindresorhus/transliterate'
import { DRAFT_ID_PREFIX, VERSION_NUMBER_MAX, versionNumberOf } from './ids.ts'

export const SLUG_MIN = 3
export const SLUG_MAX = 50
/** The shape of a slug, as a JSON Schema pattern (length and `--` are checked apart). */
export const SLUG_PATTERN = '^[a-z][a-z0-9-]*$'
const SHAPE = new RegExp(SLUG_PATTERN)
/** Separates a slug from the version number in a preview host label: `my-site--v2`. */
const PREVIEW_MARK = '--v'
/** Separates a slug from a draft's token in its preview host label: `my-site--dk3x9a0bq2z`. */
const DRAFT_MARK = '--d'
const DRAFT_TOKEN = /^[a-z0-9]{1,20}$/

/** Host labels that would shadow the service itself; they count as taken. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'www',
  'api',
  'app',
  'admin',
  'mcp',
  'docs',
  'static',
  'assets',
  'mail',
  'status',
  'dashboard',
  'plinth',
  'login',
  'signin',
  'signup',
  'account',
  'auth',
  'oauth',
  'help',
  'support',
  'blog',
  'cdn',
  'files',
  'media',
  'smtp',
  'imap',
  'pop',
  'ftp',
  'ns1',
  'ns2',
  'localhost',
  'test',
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
 * Normalizes free text (a site name or a draft slug) toward a slug: lowercase ASCII, letters
 * spelled in Latin (ß as ss, ø as o, æ as ae, Ł as L) and accents dropped, every run of other
 * characters turned into one hyphen, trimmed to the maximum length. The result may still be too
 * short or start with a digit; slugProblem says so.
 */
export function normalizeSlug(input: string): string {
  return transliterate(input)
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

/** A served address: the live site (version null) or the preview of one version. */
export interface SiteLabel {
  readonly slug: string
  /** Preview version number, null for the live site. */
  readonly version: number | null
}

/** The longest version number a preview label can carry. */
const VERSION_DIGITS_MAX = String(VERSION_NUMBER_MAX).length

/** The host label of a site address: `slug` or `slug--v{n}`. */
export function siteLabel(slug: string, version: number | null = null): string {
  return version === null ? slug : `${slug}${PREVIEW_MARK}${version}`
}

/** Parses a host label (`slug` or `slug--v{n}`); null when it names no possible site. */
export function parseSiteLabel(label: string): SiteLabel | null {
  if (label.length < SLUG_MIN || label.length > SLUG_MAX + PREVIEW_MARK.length + VERSION_DIGITS_MAX) return null
  const mark = label.indexOf('--')
  let slug = label
  let version: number | null = null
  if (mark !== -1) {
    slug = label.slice(0, mark)
    if (!label.startsWith(PREVIEW_MARK, mark)) return null
    version = versionNumberOf(label.slice(mark + PREVIEW_MARK.length))
    if (version === null || version > VERSION_NUMBER_MAX) return null
  }
  if (slug.length < SLUG_MIN || slug.length > SLUG_MAX || !SHAPE.test(slug)) return null
  return { slug, version }
}

/** A draft's preview address: its site's slug and the draft's id. */
export interface DraftLabel {
  readonly slug: string
  readonly draftId: string
}

/** The host label of a draft's preview: `{slug}--d{token}`, the token being the draft id without `drf_`. */
export function draftLabel(slug: string, draftId: string): string {
  return `${slug}${DRAFT_MARK}${draftId.slice(DRAFT_ID_PREFIX.length)}`
}

/**
 * Parses a draft preview's host label (`slug--d{token}`, lowercase as hosts are compared); null
 * when it is none. Which draft it serves is then looked up by id, and must be of that slug's site.
 */
export function parseDraftLabel(label: string): DraftLabel | null {
  const mark = label.indexOf('--')
  if (mark === -1 || !label.startsWith(DRAFT_MARK, mark)) return null
  const slug = label.slice(0, mark)
  const token = label.slice(mark + DRAFT_MARK.length)
  if (!DRAFT_TOKEN.test(token) || slug.length < SLUG_MIN || slug.length > SLUG_MAX || !SHAPE.test(slug)) return null
  return { slug, draftId: DRAFT_ID_PREFIX + token }
}

/** The preview URL of a draft. */
export function draftUrlFor(site: { siteScheme: string; siteDomain: string }, slug: string, draftId: string): string {
  return `${site.siteScheme}://${draftLabel(slug, draftId)}.${site.siteDomain}/`
}

/** How this instance's site URLs look, for descriptions: `http://{slug}.localhost:8080/`, or a preview's with `--v{n}`. */
export function siteUrlPattern(site: { siteScheme: string; siteDomain: string }, preview = false): string {
  return `${site.siteScheme}://{slug}${preview ? `${PREVIEW_MARK}{n}` : ''}.${site.siteDomain}/`
}

/** The public URL of a site: live when version is omitted, else the preview of that version. */
export function pageUrlFor(site: { siteScheme: string; siteDomain: string }, slug: string, previewVersion?: number): string {
  return `${site.siteScheme}://${siteLabel(slug, previewVersion ?? null)}.${site.siteDomain}/`
}

/**
 * A path of the same site to go on to (after signing in, after unlocking a protected site), as a
 * Location header may carry it: characters outside printable ASCII percent-encoded (`/café` gives
 * `/caf%C3%A9`; a `%` stays, as the path may be encoded already). Null for anything else: another
 * origin, `//host`, `/\host`, control characters, text that is not valid Unicode, over 2,000
 * characters.
 */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || value.length > 2000) return null
  if (/[\u0000-\u001f]/.test(value)) return null
  try {
    return value.replace(/[^\u0021-\u007e]/gu, (character) => encodeURIComponent(character))
  } catch {
    // encodeURIComponent refuses a lone surrogate (URIError).
    return null
  }
}
