/**
 * Builds the bodies of content pages from the database: entry pages and listings through the
 * site's templates, feeds, sitemap.xml and library images. Knows nothing of HTTP caching; see
 * site-content.ts for that.
 */

import type { CollectionsRepository } from '../content/collections.repository.ts'
import { COLLECTION_NAME_PATTERN, ENTRY_SLUG_PATTERN, type Field, parseFields } from '../content/content.schemas.ts'
import type { EntriesRepository } from '../content/entries.repository.ts'
import type { PublishViolation } from '../core/errors.ts'
import type { CollectionRow, EntryRow } from '../db/types.ts'
import type { AssetsRepository } from '../images/assets.repository.ts'
import { LIBRARY_PATH } from '../images/image-type.ts'
import { scanMarkup } from '../publishing/html-rules.ts'
import type { SiteContentRepository } from './site-content.repository.ts'
import { atomFeed, type FeedEntry, jsonFeed, mergeSitemap, type SitemapUrl, sitemap } from './site-feeds.ts'
import { DEFAULT_ENTRY_TEMPLATE, DEFAULT_LIST_TEMPLATE, SafeHtml, type TemplateRenderer, templateValue } from './site-templates.ts'

const PAGE_SIZE = 20
const FEED_SIZE = 50
const MAX_PAGE = 10_000
const SITEMAP_LIMIT = 50_000

export type ContentRoute =
  | { kind: 'entry'; collection: string; slug: string }
  | { kind: 'list'; collection: string; page: number }
  | { kind: 'redirect'; collection: string }
  | { kind: 'json' | 'atom'; collection: string }
  | { kind: 'sitemap' }
  | { kind: 'asset'; hash: string; ext: string }

/** A JSON Schema pattern's body, to build a larger expression from it. */
const inner = (pattern: string): string => pattern.replace(/^\^/, '').replace(/\$$/, '')
const ENTRY = new RegExp(`^/(${inner(COLLECTION_NAME_PATTERN)})-(${inner(ENTRY_SLUG_PATTERN)})$`)
const COLLECTION = new RegExp(`^/(${inner(COLLECTION_NAME_PATTERN)})(\\.json|\\.xml|/|\\.html)?$`)
const PAGE = /^[1-9][0-9]{0,4}$/

/** The content route a request target names, or null (then the site's 404 applies). */
export function parseRoute(target: string): ContentRoute | null {
  const q = target.indexOf('?')
  const path = q === -1 ? target : target.slice(0, q)
  if (path === '/sitemap.xml') return { kind: 'sitemap' }
  let m = ENTRY.exec(path)
  if (m) return { kind: 'entry', collection: m[1]!, slug: m[2]! }
  m = LIBRARY_PATH.exec(path)
  if (m) return { kind: 'asset', hash: m[1]!, ext: m[2]! }
  m = COLLECTION.exec(path)
  if (!m) return null
  if (m[2] === '.json') return { kind: 'json', collection: m[1]! }
  if (m[2] === '.xml') return { kind: 'atom', collection: m[1]! }
  if (m[2] === '/' || m[2] === '.html') return { kind: 'redirect', collection: m[1]! }
  const page = q === -1 ? null : new URLSearchParams(target.slice(q + 1)).get('page')
  if (page === null) return { kind: 'list', collection: m[1]!, page: 1 }
  return PAGE.test(page) && Number(page) <= MAX_PAGE ? { kind: 'list', collection: m[1]!, page: Number(page) } : null
}

/** A built body, or null when there is nothing at this address. */
export interface Built {
  contentType: string
  body: Buffer
}

/** The rendered page broke the authoring rules: refused, and the violations shown to the owner. */
export class RenderedPageRefused extends Error {
  constructor(
    readonly template: string,
    readonly violations: PublishViolation[],
  ) {
    super(`The page rendered by ${template} breaks the authoring rules: ${violations.map((v) => v.message).join(' ')}`)
  }
}

interface Site {
  websiteId: string
  slug: string
  /** `https://host`, no trailing slash. */
  origin: string
  templates: () => Promise<TemplateRenderer>
  /** Paths of the version's files, for sitemap.xml. */
  files: Iterable<string>
  /** The text of the bundle's own sitemap.xml, null when it has none. */
  ownSitemap: () => Promise<string | null>
}

function titleField(fields: Field[]): string | null {
  const texts = fields.filter((f) => f.type === 'text')
  return (texts.find((f) => f.name === 'title') ?? texts[0])?.name ?? null
}

function entryContext(site: Site, row: CollectionRow, fields: Field[], entry: EntryRow) {
  const rendered = JSON.parse(entry.rendered) as Record<string, unknown>
  const data: Record<string, unknown> = {}
  const list = fields.map((f) => {
    const value = templateValue(f, rendered[f.name])
    data[f.name] = value
    return { name: f.name, label: f.label, type: f.type, value }
  })
  const heading = titleField(fields)
  const title = heading !== null && typeof rendered[heading] === 'string' && rendered[heading] !== '' ? rendered[heading] : entry.slug
  return {
    slug: entry.slug,
    url: `/${row.name}-${entry.slug}`,
    absoluteUrl: `${site.origin}/${row.name}-${entry.slug}`,
    title,
    titleField: heading,
    publishedAt: entry.published_at,
    updatedAt: entry.updated_at,
    data,
    fields: list,
  }
}

function collectionContext(row: CollectionRow, fields: Field[]) {
  return {
    name: row.name,
    label: row.label,
    url: `/${row.name}`,
    jsonUrl: `/${row.name}.json`,
    atomUrl: `/${row.name}.xml`,
    fields: fields.map((f) => ({ name: f.name, label: f.label, type: f.type })),
  }
}

const absolute = (origin: string, url: string): string => (url.startsWith('/') ? origin + url : url)

/** Checks a rendered page with the same markup rules as published HTML. */
function checked(html: string, template: string, path: string): Buffer {
  const violations: PublishViolation[] = []
  scanMarkup(html, path, false, ({ line: _line, ...violation }) => violations.push(violation))
  if (violations.length > 0) throw new RenderedPageRefused(template, violations)
  return Buffer.from(html, 'utf8')
}

/** Where content pages come from: live-entry queries of their own, and the content and image repositories. */
export interface SitePagesSources {
  live: SiteContentRepository
  collections: CollectionsRepository
  entries: EntriesRepository
  /** The image library: `/_assets/{hash}.{ext}` serves a site's library images. */
  assets: AssetsRepository
}

export class SitePages {
  constructor(private readonly sources: SitePagesSources) {}

  /** When the next scheduled entry goes live (ms since epoch), Infinity when none is scheduled. */
  async validUntil(websiteId: string, now: string): Promise<number> {
    const next = await this.sources.live.nextScheduled(websiteId, now)
    return next === null ? Number.POSITIVE_INFINITY : Date.parse(next)
  }

  /**
   * The page at a content route; null when there is none. For the sitemap, `own` means the bundle's
   * own sitemap.xml is served as it is (it is not a `<urlset>` the site's URLs can be merged into).
   */
  async build(site: Site, route: Exclude<ContentRoute, { kind: 'asset' }>, now: string): Promise<Built | { redirect: string } | 'own' | null> {
    if (route.kind === 'sitemap') return this.sitemap(site, now)
    const row = await this.sources.collections.find(site.websiteId, route.collection)
    if (!row) return null
    if (route.kind === 'redirect') return { redirect: `/${row.name}` }
    const fields = parseFields(row.fields)
    const collection = collectionContext(row, fields)
    const siteContext = { slug: site.slug, url: site.origin }
    if (route.kind === 'entry') {
      const entry = await this.sources.entries.findBySlug(row.id, route.slug)
      // A scheduled entry is not on the site until its publishedAt.
      if (!entry || entry.published_at > now) return null
      const context = { site: siteContext, collection, entry: entryContext(site, row, fields, entry) }
      const { html, template } = await (await site.templates()).render(`${row.name}.html`, DEFAULT_ENTRY_TEMPLATE, context)
      return { contentType: 'text/html; charset=utf-8', body: checked(html, template, `${row.name}-${entry.slug}`) }
    }
    if (route.kind === 'list') {
      const total = await this.sources.live.countLive(row.id, now)
      const pages = Math.max(1, Math.ceil(total / PAGE_SIZE))
      if (route.page > pages) return null
      const rows = await this.sources.live.live(row.id, now, PAGE_SIZE, (route.page - 1) * PAGE_SIZE)
      const link = (page: number) => (page === 1 ? collection.url : `${collection.url}?page=${page}`)
      const pagination = {
        page: route.page,
        pages,
        total,
        perPage: PAGE_SIZE,
        previous: route.page > 1 ? link(route.page - 1) : null,
        next: route.page < pages ? link(route.page + 1) : null,
      }
      const context = { site: siteContext, collection, entries: rows.map((e) => entryContext(site, row, fields, e)), pagination }
      const { html, template } = await (await site.templates()).render(`${row.name}-list.html`, DEFAULT_LIST_TEMPLATE, context)
      return { contentType: 'text/html; charset=utf-8', body: checked(html, template, row.name) }
    }
    const rows = await this.sources.live.live(row.id, now, FEED_SIZE)
    const image = fields.find((f) => f.type === 'image')?.name
    const rich = fields.filter((f) => f.type === 'richText').map((f) => f.name)
    const entries: FeedEntry[] = rows.map((e) => {
      const ctx = entryContext(site, row, fields, e)
      const html = rich
        .map((name) => ctx.data[name])
        .filter((v): v is SafeHtml => v instanceof SafeHtml)
        .map((v) => v.html)
      const img = image === undefined ? null : ctx.data[image]
      return {
        url: ctx.absoluteUrl,
        title: ctx.title,
        publishedAt: e.published_at,
        updatedAt: e.updated_at,
        html: html.length === 0 ? null : html.join('\n'),
        image: typeof img === 'string' ? absolute(site.origin, img) : null,
      }
    })
    const feed = {
      title: row.label,
      homeUrl: site.origin + collection.url,
      jsonUrl: site.origin + collection.jsonUrl,
      atomUrl: site.origin + collection.atomUrl,
      entries,
    }
    return route.kind === 'json'
      ? { contentType: 'application/feed+json; charset=utf-8', body: Buffer.from(jsonFeed(feed), 'utf8') }
      : { contentType: 'application/atom+xml; charset=utf-8', body: Buffer.from(atomFeed(feed), 'utf8') }
  }

  private async sitemap(site: Site, now: string): Promise<Built | 'own'> {
    const own = await site.ownSitemap()
    const urls: SitemapUrl[] = []
    // The owner's sitemap decides which of the bundle's pages are listed; the site adds its content.
    if (own === null)
      for (const path of site.files) {
        if (!path.endsWith('.html') || path === '404.html' || path.startsWith('_templates/')) continue
        const page = path === 'index.html' ? '' : path.endsWith('/index.html') ? path.slice(0, -'index.html'.length) : path.slice(0, -'.html'.length)
        urls.push({ loc: `${site.origin}/${page}` })
      }
    for (const name of (await this.sources.collections.namesOf(site.websiteId)).sort()) urls.push({ loc: `${site.origin}/${name}` })
    for (const e of await this.sources.live.liveSlugs(site.websiteId, now, Math.max(0, SITEMAP_LIMIT - urls.length))) {
      urls.push({ loc: `${site.origin}/${e.name}-${e.slug}`, lastmod: e.updatedAt })
    }
    if (own === null) return { contentType: 'application/xml; charset=utf-8', body: Buffer.from(sitemap(urls.slice(0, SITEMAP_LIMIT)), 'utf8') }
    const merged = mergeSitemap(own, urls, SITEMAP_LIMIT)
    return merged === null ? 'own' : { contentType: 'application/xml; charset=utf-8', body: Buffer.from(merged, 'utf8') }
  }

  /** A library image of this website, when the URL's extension is the one its library URL has. */
  async asset(websiteId: string, hash: string, ext: string): Promise<{ hash: string; contentType: string; size: number } | null> {
    const row = await this.sources.assets.findServed(websiteId, hash, ext)
    if (!row) return null
    return { hash: row.hash, contentType: row.content_type, size: Number(row.size) }
  }
}
