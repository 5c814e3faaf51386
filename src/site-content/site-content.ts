/**
 * Content on published sites: answers the site paths that are not files of the version being
 * served (entry pages, listings, feeds, sitemap.xml, library images), through an in-memory cache.
 *
 * Cache keys hold the version id and the slug's content generation, bumped by `invalidate(slug)`:
 * the site server calls it on every site change (publish, promote, and any change to entries or
 * collections, also from other instances through PostgreSQL NOTIFY), so an edit is visible on the
 * next request while a warm unchanged page is answered without touching the database. A cached
 * page also expires when the site's next scheduled entry goes live.
 */
import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type { BlobStore } from '../blobs/blob-store.ts'
import { escapeHtml } from '../core/html.ts'
import { nowIso } from '../core/ids.ts'
import { etagMatches } from '../serving/http-conditionals.ts'
import { CACHE_REVALIDATE, NOINDEX_HEADERS, SITE_SECURITY_HEADERS } from '../serving/security-headers.ts'
import type { ContentFallback, ContentResponder } from '../serving/site-handler.ts'
import type { PreparedVersion } from '../serving/site-version.ts'
import { type ContentRoute, parseRoute, RenderedPageRefused, SitePages, type SitePagesSources } from './site-pages.ts'
import { SiteTemplates, TEMPLATE_DIR, TemplateFailure } from './site-templates.ts'

/** Library images never change under their hash. */
const IMMUTABLE = 'public, max-age=31536000, immutable'
const MAX_TEMPLATE_BYTES = 1_000_000

interface CachedResponse {
  body: Buffer
  etag: string
  ok: string[]
  notModified: string[]
  /** ms since epoch after which the page must be built again (a scheduled entry went live). */
  validUntil: number
}

export interface SiteContentOptions {
  sources: SitePagesSources
  blobs: BlobStore
  /** Scheme of site URLs (feeds and sitemap hold absolute URLs). */
  scheme: 'http' | 'https'
  log: { error(obj: unknown, msg?: string): void }
  /** Byte budget of the rendered-page cache (default 64 MiB). */
  cacheBytes?: number
}

function responseHeaders(contentType: string, body: Buffer, etag: string, cacheControl: string, preview: boolean): Pick<CachedResponse, 'ok' | 'notModified'> {
  const tail = preview ? [...SITE_SECURITY_HEADERS, ...NOINDEX_HEADERS] : [...SITE_SECURITY_HEADERS]
  return {
    ok: ['Content-Type', contentType, 'Content-Length', String(body.length), 'ETag', etag, 'Cache-Control', cacheControl, ...tail],
    notModified: ['ETag', etag, 'Cache-Control', cacheControl, ...tail],
  }
}

/** The 500 page a broken template gets: the site owner wrote it, so it says what failed. */
function ownerErrorPage(res: ServerResponse, head: boolean, title: string, lines: string[]): void {
  const body = Buffer.from(
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>' +
      escapeHtml(title) +
      '</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:10vh auto;padding:0 1rem;color:#222}li,p{color:#555}</style></head><body><h1>' +
      escapeHtml(title) +
      '</h1>' +
      lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') +
      '</body></html>\n',
    'utf8',
  )
  res.writeHead(500, [
    'Content-Type',
    'text/html; charset=utf-8',
    'Content-Length',
    String(body.length),
    'Cache-Control',
    'no-store',
    ...SITE_SECURITY_HEADERS,
    ...NOINDEX_HEADERS,
  ])
  res.end(head ? undefined : body)
}

export class SiteContent implements ContentResponder {
  private readonly pages: SitePages
  private readonly cache: LRUCache<string, CachedResponse>
  private readonly inFlight = new Map<string, Promise<CachedResponse | null>>()
  /** slug -> content generation, part of every page cache key. */
  private readonly generations = new Map<string, number>()
  /** version id -> its templates (template files are immutable within a version). */
  private readonly templates = new LRUCache<string, Promise<SiteTemplates>>({ max: 500 })

  constructor(private readonly options: SiteContentOptions) {
    this.pages = new SitePages(options.sources)
    this.cache = new LRUCache({ maxSize: options.cacheBytes ?? 64 * 1024 * 1024, sizeCalculation: (r) => r.body.length + 256 })
  }

  invalidate(slug: string): void {
    this.generations.set(slug, (this.generations.get(slug) ?? 0) + 1)
  }

  serve(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, fallback: ContentFallback): boolean {
    const route = parseRoute(req.url ?? '/')
    if (route === null) return false
    const key = this.keyOf(req, version, route)
    const hit = this.cache.get(key)
    if (hit !== undefined && Date.now() < hit.validUntil) {
      this.send(req, res, hit, head)
      return true
    }
    let running = this.inFlight.get(key)
    if (running === undefined) {
      const generation = this.generations.get(version.slug) ?? 0
      running = this.build(req, version, route).finally(() => this.inFlight.delete(key))
      this.inFlight.set(key, running)
      running.then(
        (built) => {
          // Changed while building: serve it this once, but cache only what is still current.
          if (built !== null && (this.generations.get(version.slug) ?? 0) === generation) this.cache.set(key, built)
        },
        () => {},
      )
    }
    running.then(
      (built) => (built === null ? fallback.notFound() : this.send(req, res, built, head)),
      (error) => this.failed(req, res, head, error, fallback),
    )
    return true
  }

  private keyOf(req: IncomingMessage, version: PreparedVersion, route: ContentRoute): string {
    // Library images belong to the website, not to a version or a content generation. Pages hold
    // absolute URLs of the host they were asked on (a live site and its preview differ).
    if (route.kind === 'asset') return `asset ${version.websiteId} ${route.hash} ${route.ext}`
    const page = route.kind === 'list' ? route.page : route.kind === 'entry' ? route.slug : ''
    return `${version.versionId} ${this.generations.get(version.slug) ?? 0} ${route.kind} ${'collection' in route ? route.collection : ''} ${page} ${req.headers.host ?? ''}`
  }

  private send(req: IncomingMessage, res: ServerResponse, page: CachedResponse, head: boolean): void {
    const ifNoneMatch = req.headers['if-none-match']
    if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, page.etag)) {
      res.writeHead(304, page.notModified)
      res.end()
      return
    }
    res.writeHead(200, page.ok)
    res.end(head ? undefined : page.body)
  }

  private failed(req: IncomingMessage, res: ServerResponse, head: boolean, error: unknown, fallback: ContentFallback): void {
    if (error instanceof TemplateFailure) {
      this.options.log.error({ err: error, host: req.headers.host, url: req.url }, 'site template failed')
      ownerErrorPage(res, head, 'This page could not be rendered', [error.message, 'Fix the template and publish again.'])
    } else if (error instanceof RenderedPageRefused) {
      this.options.log.error(
        { host: req.headers.host, url: req.url, template: error.template, violations: error.violations },
        'rendered page refused by the authoring rules',
      )
      ownerErrorPage(res, head, 'This page breaks the authoring rules', [
        `The page rendered by ${error.template} was not served:`,
        ...error.violations.map((v) => `${v.code}: ${v.message}`),
      ])
    } else fallback.fail(error)
  }

  private async build(req: IncomingMessage, version: PreparedVersion, route: ContentRoute): Promise<CachedResponse | null> {
    if (route.kind === 'asset') {
      const asset = await this.pages.asset(version.websiteId, route.hash, route.ext)
      if (asset === null) return null
      const body = await this.options.blobs.get(asset.hash, 'identity')
      const etag = `"${asset.hash.slice(0, 40)}"`
      return { body, etag, validUntil: Number.POSITIVE_INFINITY, ...responseHeaders(asset.contentType, body, etag, IMMUTABLE, version.preview) }
    }
    const now = nowIso()
    const site = {
      websiteId: version.websiteId,
      slug: version.slug,
      origin: `${this.options.scheme}://${String(req.headers.host).toLowerCase()}`,
      files: version.files.keys(),
      templates: () => this.templatesOf(version),
    }
    const [built, validUntil] = await Promise.all([this.pages.build(site, route, now), this.pages.validUntil(version.websiteId, now)])
    if (built === null) return null
    const etag = `"${createHash('sha256').update(built.body).digest('base64url').slice(0, 32)}"`
    return { body: built.body, etag, validUntil, ...responseHeaders(built.contentType, built.body, etag, CACHE_REVALIDATE, version.preview) }
  }

  private templatesOf(version: PreparedVersion): Promise<SiteTemplates> {
    let loading = this.templates.get(version.versionId)
    if (loading === undefined) {
      loading = this.loadTemplates(version)
      loading.catch(() => this.templates.delete(version.versionId))
      this.templates.set(version.versionId, loading)
    }
    return loading
  }

  private async loadTemplates(version: PreparedVersion): Promise<SiteTemplates> {
    const files = new Map<string, string>()
    for (const [path, file] of version.files) {
      if (!path.startsWith(TEMPLATE_DIR) || file.identity.size > MAX_TEMPLATE_BYTES) continue
      const bytes = await this.options.blobs.get(file.identity.hash, 'identity')
      files.set(path.slice(TEMPLATE_DIR.length), bytes.toString('utf8'))
    }
    return new SiteTemplates(files)
  }
}
