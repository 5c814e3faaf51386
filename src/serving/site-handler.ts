/**
 * Serves published sites straight off node:http (never through Fastify). A warm request is:
 * memoized Host parse -> manifest cache hit -> path Map lookup -> blob cache hit ->
 * res.writeHead(status, precomputed headers) + res.end(bytes), all synchronous.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { BlobStore } from '../blobs/blob-store.ts'
import { EncodingNegotiator, etagMatches, parseRange, UNSATISFIABLE } from './http-conditionals.ts'
import {
  BAD_REQUEST_PAGE,
  type BuiltinPage,
  METHOD_NOT_ALLOWED_PAGE,
  NO_SITE_PAGE,
  PAGE_NOT_FOUND_PAGE,
  SERVER_ERROR_PAGE,
  SERVICE_WORKER_REFUSED_PAGE,
  sendPage,
} from './security-headers.ts'
import { BlobCache, ManifestCache } from './site-cache.ts'
import type { ServingCounters } from '../ops/metrics.ts'
import type { CustomHosts } from './custom-hosts.ts'
import { type SiteLock, UNLOCK_PATH } from './site-lock.ts'
import { type HostEntry, SiteHosts } from './site-host.ts'
import type { SiteLookup } from './site-lookup.ts'
import { type HeaderList } from '../publishing/header-rules.ts'
import { matchRedirect, pathValue } from '../publishing/redirect-rules.ts'
import {
  chooseVariant,
  MISSING,
  mergeSiteHeaders,
  missingHeaders,
  notModifiedHeaders,
  okHeaders,
  type PreparedFile,
  type PreparedVariant,
  type PreparedVersion,
  partialHeaders,
  redirectHeaders,
  parseTarget,
  type RequestTarget,
  resolveTarget,
  siteHeadersFor,
  unsatisfiableHeaders,
  withSiteHeaders,
} from './site-version.ts'

export interface SiteServer {
  /** The site a Host header names (memoized per Host value), null when it names none: the dispatch in front of the API. */
  siteOf(host: string | undefined): HostEntry | null
  /** Answers a request to the site siteOf found for its Host. */
  serve(site: HostEntry, req: IncomingMessage, res: ServerResponse): void
  /** Answers a request whatever its Host: one that names no site gets the site-not-found page. */
  handle(req: IncomingMessage, res: ServerResponse): void
  /** Forget everything cached for this slug's live site (called after publish/promote, also from other instances). */
  invalidate(slug: string): void
  /** Drops every cached version and page (site-events.ts, when change notifications may have been lost). */
  invalidateAll(): void
  /** What the caches hold and how often they answered or missed (ops/metrics.ts reads it). */
  stats(): ServingCounters & { content: ContentStats }
}

/**
 * What a content path answers. A page is a PreparedFile (its bytes in memory or in the blob store)
 * and is served exactly like a published file; a fixed page (the owner's error page) is sent as
 * it is; a redirect keeps the request's query string; missing is the site's 404. A file answered
 * for one version and host label must not be answered for another: its headers are kept on it.
 */
export type ContentAnswer =
  { kind: 'file'; file: PreparedFile } | { kind: 'page'; page: BuiltinPage } | { kind: 'redirect'; location: string } | { kind: 'missing' }

/** Counters of a content responder: `renders` is how many pages it has built. */
export interface ContentStats {
  renders: number
  cached: number
}

/** Answers site paths that are not files of the version (entries, listings, feeds; see site-content/site-content.ts). */
export interface ContentResponder {
  /**
   * undefined when the path (origin-form, with its query) is none of its own; otherwise the answer,
   * synchronously when it is cached, else a promise of it. The bundle's own `sitemap.xml` is
   * offered here too: undefined serves the file as it is.
   */
  answer(target: string, version: PreparedVersion): ContentAnswer | Promise<ContentAnswer> | undefined
  invalidate(slug: string): void
  invalidateAll(): void
  stats(): ContentStats
}

/** For a site server that serves published files only: every other path is the site's 404. */
export const NO_CONTENT: ContentResponder = { answer: () => undefined, invalidate: () => {}, invalidateAll: () => {}, stats: () => ({ renders: 0, cached: 0 }) }

export interface SiteServerOptions {
  siteDomain: string
  /** Host names that are never sites even under the site domain (the API and web site hosts). */
  serviceHosts?: Iterable<string>
  lookup: SiteLookup
  blobs: BlobStore
  /** Byte budget of the blob cache; 0 disables it. Files over a quarter of it are never cached. */
  cacheBytes: number
  log: { error(obj: unknown, msg?: string): void }
  /** Max cached versions (default 10,000). */
  manifestEntries?: number
  /** Max files over all cached versions (default 500,000). */
  manifestFiles?: number
  /** How long unknown sites are remembered, in ms (default 5,000). */
  negativeTtlMs?: number
  /** The clock unknown sites expire by (default Date.now). */
  now?: () => number
  /** Content pages served where the version has no file (NO_CONTENT for a server of files only). */
  content: ContentResponder
  /** Site passwords (site-lock.ts); without it a protected site is served as if it had none. */
  lock?: SiteLock | null
  /** Verified custom domains (custom-hosts.ts); without it only `{slug}.{site_domain}` hosts are sites. */
  customHosts?: CustomHosts | null
}

export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { siteDomain, content } = options
  const lock = options.lock ?? null
  const { log } = options
  const negotiator = new EncodingNegotiator()
  const blobs = new BlobCache(options.blobs, options.cacheBytes)
  const manifests = new ManifestCache({
    lookup: options.lookup,
    maxEntries: options.manifestEntries,
    maxFiles: options.manifestFiles,
    negativeTtlMs: options.negativeTtlMs,
    now: options.now,
    onInvalidFile: (label, file) => log.error({ label, path: file?.path, hash: file?.hash }, 'manifest entry with an invalid hash or size skipped'),
    readBlob: (hash) => options.blobs.get(hash),
  })
  const hosts = new SiteHosts(siteDomain, options.serviceHosts ?? [], options.customHosts ?? null)

  function fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    // The request id is the one server.ts gave the response (PlinthResponse, ops/request-tracking.ts).
    log.error({ err: error, reqId: (res as { requestId?: string }).requestId, host: req.headers.host, url: req.url }, 'site request failed')
    if (res.headersSent) {
      res.destroy()
      return
    }
    try {
      sendPage(res, SERVER_ERROR_PAGE, req.method === 'HEAD')
    } catch {
      res.destroy()
    }
  }

  /** Sends a whole variant with the given status and headers, from the blob cache when possible. */
  function sendVariant(req: IncomingMessage, res: ServerResponse, status: number, headers: string[], v: PreparedVariant, head: boolean): void {
    if (head) {
      res.writeHead(status, headers)
      res.end()
      return
    }
    const bytes = blobs.peek(v)
    if (bytes !== undefined) {
      res.writeHead(status, headers)
      res.end(bytes)
      return
    }
    blobs.load(v).then(
      (loaded) => {
        res.writeHead(status, headers)
        res.end(loaded)
      },
      (error) => fail(req, res, error),
    )
  }

  function sendPartial(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    file: PreparedFile,
    start: number,
    end: number,
    extra: HeaderList,
  ): void {
    const write = (bytes: Buffer): void => {
      res.writeHead(206, mergeSiteHeaders(partialHeaders(file, version, start, end), extra, version.preview))
      res.end(bytes.subarray(start, end + 1))
    }
    const bytes = blobs.peek(file.identity)
    if (bytes !== undefined) write(bytes)
    else
      blobs
        .load(file.identity)
        .then(write)
        .catch((error) => fail(req, res, error))
  }

  /**
   * Sends a file of the version (or a content page served like one). `extra` is what the site's
   * `_headers` adds for the request path; `status` 404 sends it as a not-found page (a `_redirects`
   * 404 rule), without validators or ranges.
   */
  function serveFile(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    file: PreparedFile,
    head: boolean,
    extra: HeaderList,
    status = 200,
  ): void {
    const headers = req.headers
    const v = file.br === null && file.gzip === null ? file.identity : chooseVariant(file, negotiator.preferred(headers['accept-encoding']))
    if (status === 404) {
      sendVariant(req, res, 404, withSiteHeaders(missingHeaders(file, v, version), extra, version.preview), v, head)
      return
    }
    const ifNoneMatch = headers['if-none-match']
    if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, v.etag)) {
      res.writeHead(304, withSiteHeaders(notModifiedHeaders(file, v, version), extra, version.preview))
      res.end()
      return
    }
    const range = headers.range
    if (range !== undefined && !head) {
      const ifRange = headers['if-range']
      if (ifRange === undefined || (typeof ifRange === 'string' && ifRange.trim() === file.identity.etag)) {
        const byteRange = parseRange(range, file.identity.size)
        if (byteRange === UNSATISFIABLE) {
          res.writeHead(416, unsatisfiableHeaders(file, version))
          res.end()
          return
        }
        if (byteRange !== null) {
          sendPartial(req, res, version, file, byteRange.start, byteRange.end, extra)
          return
        }
      }
    }
    sendVariant(req, res, 200, withSiteHeaders(okHeaders(file, v, version), extra, version.preview), v, head)
  }

  function serve(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean): void {
    const target = parseTarget(req.url ?? '/')
    if (target === null) {
      sendPage(res, BAD_REQUEST_PAGE, head)
      return
    }
    // What `_headers` adds for this path (nothing for the many sites without one).
    const extra = siteHeadersFor(version, target.pathname)
    const file = resolveTarget(version, target)
    // A file, or a folder sent on to `/folder/`, comes before any rule but a forced (`!`) one.
    if (file !== MISSING && version.redirects?.forced && applyRule(req, res, version, head, target, extra, true)) return
    if (typeof file === 'object') {
      // The bundle's own sitemap.xml is merged with the site's content by the content responder.
      if (file.path === 'sitemap.xml') serveContent(req, res, version, head, target, file, extra)
      else serveFile(req, res, version, file, head, extra)
    } else if (typeof file === 'string') {
      res.writeHead(301, redirectHeaders(version, file))
      res.end()
    } else {
      serveContent(req, res, version, head, target, null, extra)
    }
  }

  /**
   * A path that is no file of the version (or the bundle's sitemap.xml, `file`): the content
   * responder answers it, and entry pages and listings come before any `_redirects` rule; where it
   * has no page either, the rules apply, then the site's 404.
   */
  function serveContent(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    file: PreparedFile | null,
    extra: HeaderList,
  ): void {
    const answer = content.answer(target.url, version)
    if (answer === undefined) {
      if (file === null) notServed(req, res, version, head, target, extra)
      else serveFile(req, res, version, file, head, extra)
    } else if (answer instanceof Promise) {
      answer.then(
        (answered) => sendAnswer(req, res, version, head, target, answered, extra),
        (error) => fail(req, res, error),
      )
    } else {
      sendAnswer(req, res, version, head, target, answer, extra)
    }
  }

  function sendAnswer(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    answer: ContentAnswer,
    extra: HeaderList,
  ): void {
    try {
      if (answer.kind === 'file') serveFile(req, res, version, answer.file, head, extra)
      else if (answer.kind === 'page') sendPage(res, answer.page, head)
      else if (answer.kind === 'missing') notServed(req, res, version, head, target, extra)
      else {
        res.writeHead(301, redirectHeaders(version, answer.location + target.search))
        res.end()
      }
    } catch (error) {
      fail(req, res, error)
    }
  }

  /** Nothing at the path: the first `_redirects` rule that matches answers, else the site's 404. */
  function notServed(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, target: RequestTarget, extra: HeaderList): void {
    if (version.redirects !== null && applyRule(req, res, version, head, target, extra, false)) return
    sendMissing(req, res, version, head, extra)
  }

  /**
   * Answers the request with the version's first matching `_redirects` rule, if one matches: a
   * redirect with its status, or the rewritten path of the same version (a file, else a content
   * page) with 200 or 404. A rewrite goes through the rules no second time; the headers are those
   * of the path asked for.
   */
  function applyRule(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    extra: HeaderList,
    fileExists: boolean,
  ): boolean {
    const match = matchRedirect(version.redirects!, target.pathname, target.search, fileExists)
    if (match === null) return false
    if ('location' in match) {
      res.writeHead(match.status, redirectHeaders(version, match.location))
      res.end()
      return true
    }
    // The rewritten path is decoded: encoded again as a request target.
    const rewritten = parseTarget(pathValue(match.rewritePath) + match.search)
    const found = rewritten === null ? MISSING : resolveTarget(version, rewritten)
    // A rewrite to a folder serves its index.html, where a request for it is sent on to `/folder/`.
    const file = typeof found === 'string' ? version.files.get(`${rewritten!.pathname.slice(1)}/index.html`)! : found
    if (typeof file === 'object') {
      serveFile(req, res, version, file, head, extra, match.status)
      return true
    }
    const answer = rewritten === null ? undefined : content.answer(rewritten.url, version)
    const send = (answered: ContentAnswer | undefined): void => {
      if (answered?.kind === 'file') serveFile(req, res, version, answered.file, head, extra, match.status)
      else if (answered?.kind === 'page') sendPage(res, answered.page, head)
      else sendMissing(req, res, version, head, extra)
    }
    if (answer instanceof Promise) answer.then(send, (error) => fail(req, res, error))
    else send(answer)
    return true
  }

  function sendMissing(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, extra: HeaderList): void {
    if (version.notFound === null) {
      if (extra.length === 0) sendPage(res, PAGE_NOT_FOUND_PAGE, head)
      else sendPage(res, { ...PAGE_NOT_FOUND_PAGE, headers: withSiteHeaders(PAGE_NOT_FOUND_PAGE.headers as string[], extra, version.preview) }, head)
    } else {
      serveFile(req, res, version, version.notFound, head, extra, 404)
    }
  }

  /** A protected site answers its password page until the visitor has unlocked it on this host. */
  function gated(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, unlocking: boolean): void {
    if (unlocking) {
      lock!.unlock(req, res, version).catch((error) => fail(req, res, error))
      return
    }
    if (version.lockedSince !== null && lock !== null && !lock.isUnlocked(req, version)) sendPage(res, lock.lockedPage(req), head)
    else serve(req, res, version, head)
  }

  function serveSite(site: HostEntry | null, req: IncomingMessage, res: ServerResponse): void {
    try {
      const method = req.method
      const head = method === 'HEAD'
      // The one POST a site host takes: the password form of a protected site.
      const unlocking = method === 'POST' && lock !== null && (req.url === UNLOCK_PATH || req.url?.startsWith(`${UNLOCK_PATH}?`) === true)
      if (method !== 'GET' && !head && !unlocking) {
        sendPage(res, METHOD_NOT_ALLOWED_PAGE, false)
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
        else gated(req, res, version, head, unlocking)
        return
      }
      manifests
        .load(site.label, site.site)
        .then((loaded) => {
          if (loaded === null) sendPage(res, NO_SITE_PAGE, head)
          else gated(req, res, loaded, head, unlocking)
        })
        .catch((error) => fail(req, res, error))
    } catch (error) {
      fail(req, res, error)
    }
  }

  return {
    siteOf: (host) => hosts.entry(host),
    serve: serveSite,
    handle: (req, res) => serveSite(hosts.entry(req.headers.host), req, res),
    invalidate(slug: string): void {
      manifests.invalidate(String(slug).toLowerCase())
      content.invalidate(String(slug).toLowerCase())
    },
    invalidateAll(): void {
      manifests.invalidateAll()
      content.invalidateAll()
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
