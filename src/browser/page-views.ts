/**
 * Screenshots and browser reports of a site's pages, for its owners and editors: a version's
 * (by id or number, live or not) or a draft's as it is now. Each page is loaded in the browser
 * pool once per what it serves (a version's id; a draft's changes with its files), path, viewport
 * and full-page choice, and the result kept for a while; asking again while it loads waits for
 * the same load.
 */
import { LRUCache } from 'lru-cache'
import type { Config } from '../config.ts'
import type { Viewport } from '../core/enums.ts'
import { isDraftId } from '../core/ids.ts'
import { notFound } from '../core/errors.ts'
import { BROWSER_CACHE_BYTES, BROWSER_CACHE_TTL_MS } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import { draftUrlFor, pageUrlFor } from '../core/site-address.ts'
import { quoted } from '../core/text.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { DraftsService } from '../drafts/drafts.service.ts'
import type { SiteServer } from '../serving/site-handler.ts'
import type { HostEntry } from '../serving/site-host.ts'
import { requireVersion, type VersionRef } from '../websites/version-refs.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import type { BrowserReport } from './browser.schemas.ts'
import { BrowserPool, type BrowserPoolStats, browserUnavailable } from './browser-pool.ts'
import { type Capture, capturePage } from './page-capture.ts'
import { siteRequester } from './site-requests.ts'

export interface PageQuery {
  path: string
  viewport: Viewport
  fullPage: boolean
}

/** A page as a request names it: each field left out takes its default. */
export type PageRequest = Partial<PageQuery>

/** The home page, in a desktop's window. */
const DEFAULT_PAGE: PageQuery = { path: '/', viewport: 'desktop', fullPage: false }

export interface PageViewsOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain' | 'browser' | 'browserPages' | 'browserPageSeconds'>
  access: WebsiteAccess
  versions: Pick<WebsitesRepository, 'findVersion' | 'findVersionByNumber'>
  drafts: Pick<DraftsService, 'manifest'>
  site: Pick<SiteServer, 'siteOf' | 'serveAsOwner' | 'servedVersion' | 'onInvalidate'>
  log: { warn(obj: unknown, msg?: string): void }
}

/** The largest answer of the site a page is handed (a page or file, uncompressed). */
const SITE_ANSWER_MAX_BYTES = 64 * 1024 * 1024

/** A page of a served site, as the browser reaches it. */
interface PageTarget {
  entry: HostEntry
  origin: string
  host: string
  /** Names what it serves now: the cache key's first part. */
  state: string
  /** How messages name it: `version 3`, `draft drf_…`. */
  name: string
}

const withDefaults = ({ path, viewport, fullPage }: PageRequest): PageQuery => ({
  path: path ?? DEFAULT_PAGE.path,
  viewport: viewport ?? DEFAULT_PAGE.viewport,
  fullPage: fullPage ?? DEFAULT_PAGE.fullPage,
})

export class PageViews {
  private readonly pool: BrowserPool
  private readonly results = new LRUCache<string, Capture>({
    maxSize: BROWSER_CACHE_BYTES,
    sizeCalculation: (capture) => capture.png.length + 4096,
    ttl: BROWSER_CACHE_TTL_MS,
  })
  private readonly loading = new Map<string, Promise<Capture>>()
  private readonly fetchSite: ReturnType<typeof siteRequester>

  constructor(private readonly options: PageViewsOptions) {
    this.pool = new BrowserPool({ executable: options.config.browser, pages: options.config.browserPages, log: options.log })
    const { site } = options
    this.fetchSite = siteRequester((req, res) => {
      const entry = site.siteOf(req.headers.host)
      if (entry === null) res.writeHead(404).end()
      else site.serveAsOwner(entry, req, res)
    }, SITE_ANSWER_MAX_BYTES)
    // A page can show more than its version's files (a collection's entries): it is taken again
    // after anything its site serves changes.
    site.onInvalidate((key) => this.forget(key))
  }

  /** Forgets the pages taken of a slug's sites (its live site, previews and drafts), or of every site (null). */
  private forget(key: string | null): void {
    const matches = (cacheKey: string) => key === null || cacheKey.startsWith(`${key}\0`) || cacheKey.startsWith(`${key}--`)
    for (const cacheKey of [...this.results.keys()]) if (matches(cacheKey)) this.results.delete(cacheKey)
    for (const cacheKey of [...this.loading.keys()]) if (matches(cacheKey)) this.loading.delete(cacheKey)
  }

  /** The page as a PNG, with its report. */
  screenshot(principal: Principal, websiteId: string, ref: VersionRef, page: PageRequest = {}): Promise<Capture> {
    return this.capture(principal, websiteId, ref, withDefaults(page))
  }

  /** What the browser saw loading the page (at the window's size: the screenshot taken with it is kept for a screenshot request). */
  async report(principal: Principal, websiteId: string, ref: VersionRef, page: Omit<PageRequest, 'fullPage'> = {}): Promise<BrowserReport> {
    return (await this.capture(principal, websiteId, ref, withDefaults({ ...page, fullPage: false }))).report
  }

  /** Whether pages can be loaded here; the reason when not (the dashboard then shows no thumbnails). */
  unavailable(): string | null {
    return this.pool.unavailable()
  }

  stats(): BrowserPoolStats {
    return this.pool.stats()
  }

  close(): Promise<void> {
    return this.pool.close()
  }

  private async capture(principal: Principal, websiteId: string, ref: VersionRef, query: PageQuery): Promise<Capture> {
    const target = await this.target(principal, websiteId, ref)
    const key = [target.entry.label, target.state, query.path, query.viewport, query.fullPage].join('\0')
    const kept = this.results.get(key)
    if (kept) return kept
    const running = this.loading.get(key)
    if (running) return running
    const why = this.pool.unavailable()
    if (why !== null) throw browserUnavailable(why)
    await this.requireServed(target, query.path)
    const load = this.pool
      .run((browser) => capturePage(browser, { origin: target.origin, host: target.host, ...query }, this.fetchSite, this.options.config.browserPageSeconds))
      .then((capture) => {
        // Kept only when nothing the page shows changed while it was taken.
        if (this.loading.get(key) === load) this.results.set(key, capture)
        return capture
      })
      .finally(() => {
        if (this.loading.get(key) === load) this.loading.delete(key)
      })
    this.loading.set(key, load)
    return load
  }

  /** The site host that serves the version or draft `ref` names; NOT_FOUND for a site, version or draft the caller cannot see or that serves nothing. */
  private async target(principal: Principal, websiteId: string, ref: VersionRef): Promise<PageTarget> {
    let pageUrl: string
    let name: string
    if (isDraftId(ref)) {
      const draft = await this.options.drafts.manifest(principal, websiteId, ref)
      pageUrl = draftUrlFor(this.options.config, draft.slug, draft.draftId)
      name = `Draft ${draft.draftId}`
    } else {
      const site = await this.options.access.requireSite(principal, websiteId, 'see')
      const version = await requireVersion(this.options.versions, site.id, ref)
      pageUrl = pageUrlFor(this.options.config, site.slug, version.number)
      name = `Version ${version.number}`
    }
    const url = new URL(pageUrl)
    const entry = this.options.site.siteOf(url.host)
    const state = entry === null ? null : await this.options.site.servedVersion(entry)
    if (entry === null || state === null) throw notFound(`${name}, as a served site,`)
    return { entry, origin: url.origin, host: url.host, state, name }
  }

  /** NOT_FOUND when the site answers 404 at the path: nothing there to load. */
  private async requireServed(target: PageTarget, path: string): Promise<void> {
    const answer = await this.fetchSite({ method: 'HEAD', url: path, headers: { host: target.host } })
    if (answer.status === 404) throw notFound(`Page ${quoted(path, 200)} of ${target.name.toLowerCase()}`)
  }
}
