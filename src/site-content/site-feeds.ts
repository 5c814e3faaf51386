/** The generated machine-readable files of a site: per-collection JSON Feed 1.1 and Atom, and sitemap.xml. */
import { escapeHtml } from '../core/html.ts'

export interface FeedEntry {
  /** Absolute URL of the entry page. */
  url: string
  title: string
  publishedAt: string
  updatedAt: string
  /** The entry's rich-text values, concatenated (already sanitized), or null. */
  html: string | null
  /** First image field (library URL, absolute), or null. */
  image: string | null
}

export interface FeedInfo {
  title: string
  /** Absolute URL of the listing page. */
  homeUrl: string
  jsonUrl: string
  atomUrl: string
  entries: FeedEntry[]
}

/** JSON Feed 1.1 (https://jsonfeed.org/version/1.1), newest first. */
export function jsonFeed(feed: FeedInfo): string {
  const items = feed.entries.map((e) => ({
    id: e.url,
    url: e.url,
    title: e.title,
    ...(e.html === null ? { content_text: '' } : { content_html: e.html }),
    ...(e.image === null ? {} : { image: e.image }),
    date_published: e.publishedAt,
    date_modified: e.updatedAt,
  }))
  return `${JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: feed.title, home_page_url: feed.homeUrl, feed_url: feed.jsonUrl, items }, null, 2)}\n`
}

const xml = (text: string): string => escapeHtml(text)

/** The later of two ISO-8601 UTC timestamps (they sort as text). */
const later = (a: string, b: string): string => (a > b ? a : b)

/** Atom 1.0 (RFC 4287), newest first; `updated` is the latest change of any listed entry. */
export function atomFeed(feed: FeedInfo): string {
  const updated = feed.entries.reduce((max, e) => later(e.updatedAt, max), feed.entries[0]?.publishedAt ?? '1970-01-01T00:00:00.000Z')
  const entries = feed.entries.map(
    (e) =>
      `  <entry>\n    <id>${xml(e.url)}</id>\n    <title>${xml(e.title)}</title>\n    <link rel="alternate" type="text/html" href="${xml(e.url)}"/>\n` +
      `    <published>${xml(e.publishedAt)}</published>\n    <updated>${xml(later(e.updatedAt, e.publishedAt))}</updated>\n` +
      (e.html === null ? '' : `    <content type="html">${xml(e.html)}</content>\n`) +
      '  </entry>\n',
  )
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n' +
    `  <id>${xml(feed.atomUrl)}</id>\n  <title>${xml(feed.title)}</title>\n  <updated>${xml(updated)}</updated>\n` +
    `  <link rel="self" type="application/atom+xml" href="${xml(feed.atomUrl)}"/>\n  <link rel="alternate" type="text/html" href="${xml(feed.homeUrl)}"/>\n` +
    entries.join('') +
    '</feed>\n'
  )
}

export interface SitemapUrl {
  loc: string
  lastmod?: string
}

const urlElement = (u: SitemapUrl): string => `  <url><loc>${xml(u.loc)}</loc>${u.lastmod ? `<lastmod>${xml(u.lastmod)}</lastmod>` : ''}</url>\n`

/** sitemap.xml (sitemaps.org 0.9): absolute URLs, with lastmod where known. */
export function sitemap(urls: SitemapUrl[]): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map(urlElement).join('')}</urlset>\n`
}

const URLSET_END = /<\/(?:[A-Za-z_][\w.-]*:)?urlset\s*>/g
const URL_START = /<(?:[A-Za-z_][\w.-]*:)?url[\s>]/g
const LOC = /<(?:[A-Za-z_][\w.-]*:)?loc\s*>\s*([^<]*?)\s*<\/(?:[A-Za-z_][\w.-]*:)?loc\s*>/g

const unescapeXml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name]!)

/**
 * The bundle's own sitemap with the site's URLs added: every URL it does not list already goes in
 * before its closing `</urlset>`, up to `limit` URLs in all. Null when it is not a `<urlset>` (a
 * sitemap index, or not a sitemap at all): then it is served as it is.
 */
export function mergeSitemap(own: string, urls: SitemapUrl[], limit: number): string | null {
  let end = -1
  for (const m of own.matchAll(URLSET_END)) end = m.index
  if (end === -1) return null
  const listed = new Set([...own.matchAll(LOC)].map((m) => unescapeXml(m[1]!)))
  const room = Math.max(0, limit - [...own.matchAll(URL_START)].length)
  const added = urls.filter((u) => !listed.has(u.loc)).slice(0, room)
  if (added.length === 0) return own
  const before = own.slice(0, end)
  return `${before}${before.endsWith('\n') ? '' : '\n'}${added.map(urlElement).join('')}${own.slice(end)}`
}
