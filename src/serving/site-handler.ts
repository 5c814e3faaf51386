/**
 * Serves published sites straight off node:http (never through Fastify). A warm request is:
 * memoized Host parse -> manifest cache hit -> path Map lookup -> blob cache hit ->
 * res.writeHead(status, precomputed headers) + res.end(bytes), all synchronous.
 *
 * This file takes a request up to the version it asks for (method, Host, cached version,
 * password gate); site-routing.ts picks the answer and file-responses.ts writes it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { BlobStore } from '../blobs/blob-store.ts'
import { parseDraftLabel } from '../core/site-address.ts'
import type { ServingCounters } from '../ops/metrics.ts'
import { FORM_PATH_PREFIX } from '../core/form-names.ts'
import type { ContentResponder, ContentStats } from './content-responder.ts'
import type { CustomHosts } from './custom-hosts.ts'
import { FileResponder } from './file-responses.ts'
import { FormPosts, type FormReceiver, THANKS_PAGE, thanksPageOf } from './form-posts.ts'
import { METHOD_NOT_ALLOWED_PAGE, NO_SITE_PAGE, POST_PATH_METHOD_NOT_ALLOWED_PAGE, SERVICE_WORKER_REFUSED_PAGE, sendPage } from './security-headers.ts'
import { BlobCache, ManifestCache, type ManifestCacheLimits } from './site-cache.ts'
import { type HostEntry, NO_SITE, type SiteAddress, SiteHosts } from './site-host.ts'
import { type SiteLock, UNLOCK_PATH } from './site-lock.ts'
import type { SiteLookup } from './site-lookup.ts'
import type { SiteTraffic } from './site-traffic.ts'
import { SiteRouter } from './site-routing.ts'
import type { PreparedVersion } from './site-version.ts'

export interface SiteServer {
  /** The site a Host header names (memoized per Host value), null when it names none. */
  siteOf(host: string | undefined): HostEntry | null
  /**
   * What a Host header names (memoized per Host value), the dispatch in front of the API: a site,
   * NO_SITE for an address under the site domain that names none (never one the API or the web
   * site answers), null for any other.
   */
  addressOf(host: string | undefined): SiteAddress
  /** Answers a request to what addressOf found for its Host: a site, or the site-not-found page. */
  serve(site: HostEntry | typeof NO_SITE, req: IncomingMessage, res: ServerResponse): void
  /**
   * Answers a request to the site as its owners and editors see it: a protected site's password
   * page does not apply. For callers in this process that checked who may see the site (the
   * browser that takes screenshots), never for a request from the network.
   */
  serveAsOwner(site: HostEntry, req: IncomingMessage, res: ServerResponse): void
  /** The id of what the site serves now (a draft's changes with its files), read as a request would; null when it serves nothing. */
  servedVersion(site: HostEntry): Promise<string | null>
  /** Answers a request whatever its Host: one that names no site gets the site-not-found page. */
  handle(req: IncomingMessage, res: ServerResponse): void
  /**
   * Forget everything cached for a site event's key (after a publish, promote, entry change,
   * also from other instances): a slug's live site and previews, or one draft's preview (its label).
   */
  invalidate(key: string): void
  /** Drops every cached version and page (site-events.ts, when change notifications may have been lost). */
  invalidateAll(): void
  /** Calls `listener` after each invalidate (with its key) and invalidateAll (with null): what others keep of the site's answers is stale too. */
  onInvalidate(listener: (key: string | null) => void): void
  /** What the caches hold and how often they answered or missed (ops/metrics.ts reads it). */
  stats(): ServingCounters & { content: ContentStats }
}

export interface SiteServerOptions {
  siteDomain: string
  /** Host names that are never sites even under the site domain (the API and web site hosts). */
  serviceHosts?: Iterable<string>
  lookup: SiteLookup
  blobs: BlobStore
  /** Byte budget of the blob cache; 0 disables it. Files over a quarter of it are never cached. */
  cacheBytes: number
  log: { error(obj: unknown, msg?: string): void }
  /** What the manifest cache holds, and how long it remembers an unknown site (MANIFEST_CACHE_LIMITS on a server). */
  manifests: ManifestCacheLimits
  /** The clock unknown sites expire by (Date.now on a server). */
  now: () => number
  /** Content pages served where the version has no file (NO_CONTENT for a server of files only). */
  content: ContentResponder
  /** Site passwords (site-lock.ts); without it a protected site is served as if it had none. */
  lock?: SiteLock | null
  /** Verified custom domains (custom-hosts.ts); without it only `{slug}.{site_domain}` hosts are sites. */
  customHosts?: CustomHosts | null
  /** Takes posts to the forms versions declare (form-posts.ts); without it a site takes no form posts. */
  forms?: FormReceiver | null
  /** The client's address (what form posts are counted by): the connection's, or what trusted proxies report. */
  clientAddress?: (req: IncomingMessage) => string
  /** Counts the requests to live sites (site-traffic.ts); without it nothing is counted. */
  traffic?: SiteTraffic | null
}

const UNLOCK_PATH_WITH_QUERY = `${UNLOCK_PATH}?`
/** The paths a site host takes posts on: its password form, and its forms. */
const isUnlockPath = (url: string | undefined): boolean => url === UNLOCK_PATH || url?.startsWith(UNLOCK_PATH_WITH_QUERY) === true
const isFormPath = (url: string | undefined): boolean => url?.startsWith(FORM_PATH_PREFIX) === true

/** The path of a request target, without its query. */
const pathOf = (url: string | undefined): string => {
  const target = url ?? '/'
  const query = target.indexOf('?')
  return query === -1 ? target : target.slice(0, query)
}

export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { siteDomain, content, log } = options
  const lock = options.lock ?? null
  const blobs = new BlobCache(options.blobs, options.cacheBytes)
  const manifests = new ManifestCache({
    ...options.manifests,
    lookup: options.lookup,
    now: options.now,
    onInvalidFile: (label, file) => log.error({ label, path: file?.path, hash: file?.hash }, 'manifest entry with an invalid hash or size skipped'),
    readBlob: (hash) => options.blobs.get(hash),
  })
  const hosts = new SiteHosts(siteDomain, options.serviceHosts ?? [], options.customHosts ?? null)
  const files = new FileResponder(blobs, log)
  const router = new SiteRouter(content, files)
  const invalidated: Array<(key: string | null) => void> = []
  const traffic = options.traffic ?? null
  const forms = options.forms ? new FormPosts(options.forms, options.clientAddress ?? ((req) => req.socket.remoteAddress ?? 'unknown')) : null

  /** What a request to a version gets once past its password gate: a form post, a form's thank-you page, or what routing answers. */
  function answer(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, form: string | null): void {
    if (form !== null) {
      forms!.post(req, res, version, form).catch((error) => files.fail(req, res, error))
      return
    }
    const thanks = forms !== null && req.url?.startsWith(FORM_PATH_PREFIX) === true ? thanksPageOf(pathOf(req.url)) : null
    if (thanks !== null && version.forms.has(thanks) && !version.files.has(pathOf(req.url).slice(1))) sendPage(res, THANKS_PAGE, head)
    else router.serve(req, res, version, head)
  }

  /** A protected site answers its password page until the visitor has unlocked it on this host (an owner's request aside). */
  function gated(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    unlocking: boolean,
    owner: boolean,
    form: string | null,
  ): void {
    // Visitors' requests to the live site are counted; previews and the owner's own views are not.
    if (traffic !== null && !owner && !version.preview) traffic.observe(version.websiteId, req, res)
    if (unlocking && !owner) {
      lock!.unlock(req, res, version).catch((error) => files.fail(req, res, error))
      return
    }
    if (!owner && version.lockedSince !== null && lock !== null && !lock.isUnlocked(req, version)) {
      // A form post to a locked site is not read: the visitor unlocks the site first.
      if (form !== null && forms!.lockedAnswer(req, res)) return
      if (form !== null) req.resume()
      sendPage(res, lock.lockedPage(req), head)
    } else answer(req, res, version, head, form)
  }

  /** Answers a request to `site` (null: its Host names no site). */
  function serveSite(site: HostEntry | null, req: IncomingMessage, res: ServerResponse, owner = false): void {
    try {
      const method = req.method
      const head = method === 'HEAD'
      // The one POST a site host takes: the password form of a protected site.
      const unlocking = method === 'POST' && lock !== null && isUnlockPath(req.url)
      // And the posts to its forms.
      const form = method === 'POST' && forms !== null && isFormPath(req.url) ? pathOf(req.url).slice(FORM_PATH_PREFIX.length) : null
      if (method !== 'GET' && !head && !unlocking && form === null) {
        const takesPosts = isFormPath(req.url) || isUnlockPath(req.url)
        sendPage(res, takesPosts ? POST_PATH_METHOD_NOT_ALLOWED_PAGE : METHOD_NOT_ALLOWED_PAGE, false)
        return
      }
      // Browsers fetch a service worker's script with this header, and register none it refuses.
      if (req.headers['service-worker'] !== undefined) {
        sendPage(res, SERVICE_WORKER_REFUSED_PAGE, head)
        return
      }
      if (site === null) {
        sendPage(res, NO_SITE_PAGE, head)
        return
      }
      const version = manifests.get(site.label)
      if (version !== undefined) {
        if (version === null) sendPage(res, NO_SITE_PAGE, head)
        else gated(req, res, version, head, unlocking, owner, form)
        return
      }
      manifests
        .load(site.label, site.site)
        .then((loaded) => {
          if (loaded === null) sendPage(res, NO_SITE_PAGE, head)
          else gated(req, res, loaded, head, unlocking, owner, form)
        })
        .catch((error) => files.fail(req, res, error))
    } catch (error) {
      files.fail(req, res, error)
    }
  }

  return {
    siteOf: (host) => hosts.entry(host),
    addressOf: (host) => hosts.addressOf(host),
    serve: (site, req, res) => serveSite(site === NO_SITE ? null : site, req, res),
    serveAsOwner: (site, req, res) => serveSite(site, req, res, true),
    async servedVersion(site) {
      const version = manifests.get(site.label) ?? (await manifests.load(site.label, site.site))
      return version?.versionId ?? null
    },
    handle: (req, res) => serveSite(hosts.entry(req.headers.host), req, res),
    invalidate(key: string): void {
      const label = String(key).toLowerCase()
      manifests.invalidate(label)
      // A draft's content pages are keyed by its files' digest (versionId), its entries by its slug.
      if (parseDraftLabel(label) === null) content.invalidate(label)
      for (const listener of invalidated) listener(label)
    },
    invalidateAll(): void {
      manifests.invalidateAll()
      content.invalidateAll()
      for (const listener of invalidated) listener(null)
    },
    onInvalidate(listener) {
      invalidated.push(listener)
    },
    stats() {
      return {
        sites: manifests.size,
        blobBytes: blobs.bytes,
        blobEntries: blobs.entries,
        blobHits: blobs.hits,
        blobMisses: blobs.misses,
        manifestHits: manifests.hits,
        manifestMisses: manifests.misses,
        content: content.stats(),
      }
    },
  }
}
