/**
 * Serves published sites straight off node:http (never through Fastify). A warm request is:
 * memoized Host parse -> manifest cache hit -> path Map lookup -> blob cache hit ->
 * res.writeHead(status, precomputed headers) + res.end(bytes), all synchronous.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { BlobStore } from '../blobs/blob-store.ts'
import { siteLabel } from '../core/site-address.ts'
import { EncodingNegotiator, etagMatches, parseRange, UNSATISFIABLE } from './http-conditionals.ts'
import { BAD_REQUEST_PAGE, type BuiltinPage, METHOD_NOT_ALLOWED_PAGE, NO_SITE_PAGE, PAGE_NOT_FOUND_PAGE, SERVER_ERROR_PAGE } from './security-headers.ts'
import { BlobCache, ManifestCache } from './site-cache.ts'
import { hostName, parseSiteHost, type SiteHost } from './site-host.ts'
import type { SiteLookup } from './site-lookup.ts'
import {
  BAD_PATH,
  chooseVariant,
  missingHeaders,
  notModifiedHeaders,
  okHeaders,
  originForm,
  type PreparedFile,
  type PreparedVariant,
  type PreparedVersion,
  partialHeaders,
  redirectHeaders,
  resolvePath,
  unsatisfiableHeaders,
} from './site-version.ts'

export interface SiteServer {
  handle(req: IncomingMessage, res: ServerResponse): void
  /** Whether a Host header names a site (memoized per Host value): the dispatch in front of the API. */
  isSiteHost(host: string | undefined): boolean
  /** Forget everything cached for this slug's live site (called after publish/promote, also from other instances). */
  invalidate(slug: string): void
  stats(): { sites: number; blobBytes: number; blobEntries: number; content: ContentStats }
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
  stats(): ContentStats
}

/** For a site server that serves published files only: every other path is the site's 404. */
export const NO_CONTENT: ContentResponder = { answer: () => undefined, invalidate: () => {}, stats: () => ({ renders: 0, cached: 0 }) }

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
}

interface HostEntry {
  label: string
  site: SiteHost
}

const HOST_MEMO_LIMIT = 4096

function sendPage(res: ServerResponse, page: BuiltinPage, head: boolean): void {
  res.writeHead(page.status, page.headers as string[])
  if (head) res.end()
  else res.end(page.body)
}

export function createSiteServer(options: SiteServerOptions): SiteServer {
  const { siteDomain, content } = options
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
  })
  /** Host header value -> parsed site host (or null): parsing is skipped for repeat hosts. */
  const hosts = new Map<string, HostEntry | null>()
  const serviceHosts = new Set([...(options.serviceHosts ?? [])].map((h) => h.toLowerCase()))

  function hostEntry(host: string | undefined): HostEntry | null {
    if (host === undefined) return null
    const hit = hosts.get(host)
    if (hit !== undefined) return hit
    const site = parseSiteHost(host, siteDomain)
    const entry = site === null || serviceHosts.has(hostName(host) ?? '') ? null : { label: siteLabel(site.slug, site.version), site }
    if (hosts.size >= HOST_MEMO_LIMIT) hosts.clear()
    hosts.set(host, entry)
    return entry
  }

  function fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    log.error({ err: error, host: req.headers.host, url: req.url }, 'site request failed')
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

  function sendPartial(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, file: PreparedFile, start: number, end: number): void {
    const write = (bytes: Buffer): void => {
      res.writeHead(206, partialHeaders(file, version, start, end))
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

  function serveFile(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, file: PreparedFile, head: boolean): void {
    const headers = req.headers
    const v = file.br === null && file.gzip === null ? file.identity : chooseVariant(file, negotiator.preferred(headers['accept-encoding']))
    const ifNoneMatch = headers['if-none-match']
    if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, v.etag)) {
      res.writeHead(304, notModifiedHeaders(file, v, version))
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
          sendPartial(req, res, version, file, byteRange.start, byteRange.end)
          return
        }
      }
    }
    sendVariant(req, res, 200, okHeaders(file, v, version), v, head)
  }

  function serve(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean): void {
    const url = req.url ?? '/'
    const target = resolvePath(version, url)
    if (typeof target === 'object') {
      // The bundle's own sitemap.xml is merged with the site's content by the content responder.
      if (target.path === 'sitemap.xml') serveContent(req, res, version, head, originForm(url) ?? url, target)
      else serveFile(req, res, version, target, head)
    } else if (typeof target === 'string') {
      res.writeHead(301, redirectHeaders(version, target))
      res.end()
    } else if (target === BAD_PATH) {
      sendPage(res, BAD_REQUEST_PAGE, head)
    } else {
      serveContent(req, res, version, head, originForm(url) ?? url, null)
    }
  }

  /** A path that is no file of the version (or the bundle's sitemap.xml, `file`): the content responder answers it. */
  function serveContent(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, target: string, file: PreparedFile | null): void {
    const answer = content.answer(target, version)
    if (answer === undefined) {
      if (file === null) sendMissing(req, res, version, head)
      else serveFile(req, res, version, file, head)
    } else if (answer instanceof Promise) {
      answer.then(
        (answered) => sendAnswer(req, res, version, head, target, answered),
        (error) => fail(req, res, error),
      )
    } else {
      sendAnswer(req, res, version, head, target, answer)
    }
  }

  function sendAnswer(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, target: string, answer: ContentAnswer): void {
    try {
      if (answer.kind === 'file') serveFile(req, res, version, answer.file, head)
      else if (answer.kind === 'page') sendPage(res, answer.page, head)
      else if (answer.kind === 'missing') sendMissing(req, res, version, head)
      else {
        const q = target.indexOf('?')
        res.writeHead(301, redirectHeaders(version, q === -1 ? answer.location : answer.location + target.slice(q)))
        res.end()
      }
    } catch (error) {
      fail(req, res, error)
    }
  }

  function sendMissing(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean): void {
    if (version.notFound === null) {
      sendPage(res, PAGE_NOT_FOUND_PAGE, head)
    } else {
      const page = version.notFound
      const v = chooseVariant(page, negotiator.preferred(req.headers['accept-encoding']))
      sendVariant(req, res, 404, missingHeaders(page, v, version), v, head)
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      const method = req.method
      const head = method === 'HEAD'
      if (method !== 'GET' && !head) {
        sendPage(res, METHOD_NOT_ALLOWED_PAGE, false)
        return
      }
      const host = hostEntry(req.headers.host)
      if (host === null) {
        sendPage(res, NO_SITE_PAGE, head)
        return
      }
      const version = manifests.get(host.label)
      if (version !== undefined) {
        if (version === null) sendPage(res, NO_SITE_PAGE, head)
        else serve(req, res, version, head)
        return
      }
      manifests
        .load(host.label, host.site)
        .then((loaded) => {
          if (loaded === null) sendPage(res, NO_SITE_PAGE, head)
          else serve(req, res, loaded, head)
        })
        .catch((error) => fail(req, res, error))
    } catch (error) {
      fail(req, res, error)
    }
  }

  return {
    handle,
    isSiteHost: (host) => hostEntry(host) !== null,
    invalidate(slug: string): void {
      manifests.invalidate(String(slug).toLowerCase())
      content.invalidate(String(slug).toLowerCase())
    },
    stats() {
      return { sites: manifests.size, blobBytes: blobs.bytes, blobEntries: blobs.entries, content: content.stats() }
    },
  }
}
