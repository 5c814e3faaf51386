/**
 * Content on published sites: answers the site paths that are not files of the version being
 * served (entry pages, listings, feeds, sitemap.xml, library images), through an in-memory cache.
 * A built page is kept as bytes with its br and gzip variants, as a PreparedFile the site server
 * sends exactly like a published file (ETag, Vary, Range, HEAD, 304); a warm page is answered
 * synchronously.
 *
 * Cache keys hold the version id and the slug's content generation, bumped by `invalidate(slug)`:
 * the site server calls it on every site change (publish, promote, and any change to entries or
 * collections, also from other instances through PostgreSQL NOTIFY), so an edit is visible on the
 * next request while a warm unchanged page is answered without touching the database. A cached
 * page also expires when the site's next scheduled entry goes live.
 */
import { LRUCache } from 'lru-cache'
import type { BlobStore } from '../blobs/blob-store.ts'
import { nowIso } from '../core/ids.ts'
import { compressVariants } from '../blobs/compression.ts'
import { bytesToText } from '../publishing/bundle-paths.ts'
import { type BuiltinPage, builtin, htmlPage } from '../serving/security-headers.ts'
import type { ContentAnswer, ContentResponder, ContentStats } from '../serving/content-responder.ts'
import { memoryFile, type PreparedVersion, storedFile } from '../serving/site-version.ts'
import { type ContentRoute, parseRoute, RenderedPageRefused, SitePages, type SitePagesSources } from './site-pages.ts'
import type { TemplatePool } from './site-templates.pool.ts'
import { TEMPLATE_DIR, TemplateFailure, type TemplateRenderer } from './site-templates.ts'

/** Library images never change under their hash. */
const IMMUTABLE = 'public, max-age=31536000, immutable'
const MAX_TEMPLATE_BYTES = 1_000_000
/** A bundle's own sitemap.xml larger than this is served as it is, not merged. */
const MAX_OWN_SITEMAP_BYTES = 10_000_000

const MISSING: ContentAnswer = Object.freeze({ kind: 'missing' })

interface Cached {
  answer: ContentAnswer
  /** ms since epoch after which the page must be built again (a scheduled entry went live). */
  validUntil: number
  /** Bytes held, for the cache budget. */
  size: number
  /** False for answers that no content change invalidates (a library image not found yet). */
  keep: boolean
}

export interface SiteContentOptions {
  sources: SitePagesSources
  blobs: BlobStore
  /** Scheme of site URLs (feeds and sitemap hold absolute URLs). */
  scheme: 'http' | 'https'
  /** The site domain (with its port, if any): a page's absolute URLs are on `{label}.{siteDomain}`. */
  siteDomain: string
  log: { error(obj: unknown, msg?: string): void }
  /** The worker threads that render entry pages and listings (never the event loop). */
  templates: TemplatePool
  /** Byte budget of the rendered-page cache (SITE_PAGE_CACHE_BYTES). */
  cacheBytes: number
}

/** A server's rendered-page cache: entry pages, listings and feeds of every site it serves. */
export const SITE_PAGE_CACHE_BYTES = 64 * 1024 * 1024

/** The 500 page a broken template gets: the site owner wrote it, so it says what failed. */
const ownerErrorPage = (title: string, lines: string[]): BuiltinPage => builtin(500, 'text/html; charset=utf-8', htmlPage(title, ...lines))

export class SiteContent implements ContentResponder {
  private readonly pages: SitePages
  private readonly cache: LRUCache<string, Cached>
  private readonly inFlight = new Map<string, Promise<ContentAnswer>>()
  /** slug -> content generation, part of every page cache key. */
  private readonly generations = new Map<string, number>()
  /** version id -> its templates (template files are immutable within a version): read once per version, compiled in the threads. */
  private readonly templates = new LRUCache<string, Promise<TemplateRenderer>>({ max: 500 })
  private renders = 0
  /** Bumped by invalidateAll(): a page built across it is not kept. */
  private epoch = 0

  constructor(private readonly options: SiteContentOptions) {
    // Checked here, not at the first page: a server wired without its threads must not start.
    if (options.templates === undefined) throw new Error('SiteContent needs its template pool (options.templates)')
    this.pages = new SitePages(options.sources)
    this.cache = new LRUCache({ maxSize: options.cacheBytes, sizeCalculation: (c) => c.size })
  }

  invalidate(slug: string): void {
    this.generations.set(slug, (this.generations.get(slug) ?? 0) + 1)
  }

  /** Forgets every page: a page being built now is answered once but not kept. */
  invalidateAll(): void {
    this.epoch++
    this.cache.clear()
  }

  stats(): ContentStats {
    return { renders: this.renders, cached: this.cache.size }
  }

  answer(target: string, version: PreparedVersion): ContentAnswer | Promise<ContentAnswer> | undefined {
    const route = parseRoute(target)
    if (route === null) return undefined
    const generation = this.generations.get(version.slug) ?? 0
    const epoch = this.epoch
    const key = this.keyOf(version, generation, route)
    const hit = this.cache.get(key)
    if (hit !== undefined && (hit.validUntil === Number.POSITIVE_INFINITY || Date.now() < hit.validUntil)) return hit.answer
    let running = this.inFlight.get(key)
    if (running === undefined) {
      running = this.build(version, route)
        .then((built) => {
          // Changed while building: answer with it this once, but cache only what is still current.
          if (built.keep && (this.generations.get(version.slug) ?? 0) === generation && this.epoch === epoch) this.cache.set(key, built)
          return built.answer
        })
        .finally(() => this.inFlight.delete(key))
      this.inFlight.set(key, running)
    }
    return running
  }

  /**
   * Pages belong to a site (its host label: a live site and its preview differ) and a version, not
   * to the Host header they were asked with: every spelling of one site's host shares one entry.
   */
  private keyOf(version: PreparedVersion, generation: number, route: ContentRoute): string {
    // Library images belong to the website, not to a version or a content generation.
    if (route.kind === 'asset') return `asset ${version.label} ${version.websiteId} ${route.hash} ${route.ext}`
    const page = route.kind === 'list' ? route.page : route.kind === 'entry' ? route.slug : ''
    return `${version.label} ${version.versionId} ${generation} ${route.kind} ${'collection' in route ? route.collection : ''} ${page}`
  }

  private async build(version: PreparedVersion, route: ContentRoute): Promise<Cached> {
    if (route.kind === 'asset') {
      const asset = await this.pages.asset(version.websiteId, route.hash, route.ext)
      if (asset === null) return { answer: MISSING, validUntil: 0, size: 0, keep: false }
      const file = storedFile(`_assets/${asset.hash}.${route.ext}`, asset.contentType, asset.hash, asset.size, IMMUTABLE)
      return { answer: { kind: 'file', file }, validUntil: Number.POSITIVE_INFINITY, size: 512, keep: true }
    }
    this.renders++
    const now = nowIso()
    const site = {
      websiteId: version.websiteId,
      slug: version.slug,
      origin: `${this.options.scheme}://${version.label}.${this.options.siteDomain}`,
      files: version.files.keys(),
      templates: () => this.templatesOf(version),
      ownSitemap: () => this.ownSitemap(version),
    }
    // A template that fails answers its error page, cached like a page until the next change.
    const page = this.pages.build(site, route, now).catch((error: unknown) => this.ownerFailure(error, version, route))
    const [built, validUntil] = await Promise.all([page, this.pages.validUntil(version.websiteId, now)])
    let answer: ContentAnswer
    let size = 256
    if (built === null) answer = MISSING
    else if (built === 'own') {
      const own = version.files.get('sitemap.xml')
      answer = own === undefined ? MISSING : { kind: 'file', file: own }
    } else if ('redirect' in built) answer = { kind: 'redirect', location: built.redirect }
    else if ('status' in built) {
      answer = { kind: 'page', page: built }
      size += built.body.length
    } else {
      // The same variants as a published file's, made once when the page is built.
      const { br, gzip: gzipped } = await compressVariants(built.body, built.contentType)
      const file = memoryFile(target(route), built.contentType, built.body, br, gzipped)
      answer = { kind: 'file', file }
      size += built.body.length + (br?.length ?? 0) + (gzipped?.length ?? 0)
    }
    return { answer, validUntil, size, keep: true }
  }

  /** The owner's error page for a template that failed or a rendered page the rules refuse; other errors propagate. */
  private ownerFailure(error: unknown, version: PreparedVersion, route: ContentRoute): BuiltinPage {
    const where = { site: version.label, version: version.number, path: `/${target(route)}` }
    if (error instanceof TemplateFailure) {
      this.options.log.error({ err: error, ...where }, 'site template failed')
      return ownerErrorPage('This page could not be rendered', [error.message, 'Fix the template and publish again.'])
    }
    if (error instanceof RenderedPageRefused) {
      this.options.log.error({ ...where, template: error.template, violations: error.violations }, 'rendered page refused by the authoring rules')
      return ownerErrorPage('This page breaks the authoring rules', [
        `The page rendered by ${error.template} was not served:`,
        ...error.violations.map((v) => `${v.code}: ${v.message}`),
      ])
    }
    throw error
  }

  private async ownSitemap(version: PreparedVersion): Promise<string | null> {
    const file = version.files.get('sitemap.xml')
    if (file === undefined) return null
    // Too large to merge: the merge gives up, and the file is served as it is.
    if (file.identity.size > MAX_OWN_SITEMAP_BYTES) return ''
    return bytesToText(await this.options.blobs.get(file.identity.hash, 'identity'))
  }

  private templatesOf(version: PreparedVersion): Promise<TemplateRenderer> {
    let loading = this.templates.get(version.versionId)
    if (loading === undefined) {
      loading = this.loadTemplates(version)
      // A failed load is forgotten, so the next request tries again; its error reaches the caller through `loading`.
      loading.catch(() => this.templates.delete(version.versionId))
      this.templates.set(version.versionId, loading)
    }
    return loading
  }

  private async loadTemplates(version: PreparedVersion): Promise<TemplateRenderer> {
    const files = new Map<string, string>()
    for (const [path, file] of version.templates) {
      if (file.identity.size > MAX_TEMPLATE_BYTES) continue
      const bytes = await this.options.blobs.get(file.identity.hash, 'identity')
      files.set(path.slice(TEMPLATE_DIR.length), bytesToText(bytes))
    }
    return this.options.templates.version(version.versionId, files)
  }
}

/** The path a content route is served at (no leading slash), for logs and the prepared page. */
function target(route: ContentRoute): string {
  switch (route.kind) {
    case 'entry':
      return `${route.collection}-${route.slug}`
    case 'list':
      return route.page === 1 ? route.collection : `${route.collection}?page=${route.page}`
    case 'json':
      return `${route.collection}.json`
    case 'atom':
      return `${route.collection}.xml`
    case 'redirect':
      return `${route.collection}/`
    case 'sitemap':
      return 'sitemap.xml'
    case 'asset':
      return `_assets/${route.hash}.${route.ext}`
  }
}
