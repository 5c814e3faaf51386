/**
 * Writing a file's answer: the variant for the client's Accept-Encoding, 304 for a matching
 * If-None-Match, 206 or 416 for a single byte range, else the whole variant, with the header list
 * built once for it (response-headers.ts) and the site's `_headers` additions. The bytes come from
 * the blob cache when it holds them (the warm path, synchronous), else from the blob store.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HeaderList } from '../publishing/header-rules.ts'
import { EncodingNegotiator, etagMatches, parseRange, type ServedEncoding, UNSATISFIABLE } from './http-conditionals.ts'
import { missingHeaders, notModifiedHeaders, okHeaders, partialHeaders, unsatisfiableHeaders } from './response-headers.ts'
import { SERVER_ERROR_PAGE, sendPage } from './security-headers.ts'
import type { BlobCache } from './site-cache.ts'
import { mergeSiteHeaders, withSiteHeaders } from './site-header-rules.ts'
import type { PreparedFile, PreparedVariant, PreparedVersion } from './site-version.ts'

/** Where failed requests are reported. */
export interface FailureLog {
  error(obj: unknown, msg?: string): void
}

/** The variant to send for the client's acceptable encodings (identity when nothing else fits). */
export function chooseVariant(file: PreparedFile, acceptable: readonly ServedEncoding[]): PreparedVariant {
  for (let i = 0; i < acceptable.length; i++) {
    const encoding = acceptable[i]
    if (encoding === 'br') {
      if (file.br !== null) return file.br
    } else if (encoding === 'gzip') {
      if (file.gzip !== null) return file.gzip
    } else {
      return file.identity
    }
  }
  return file.identity
}

export class FileResponder {
  private readonly negotiator = new EncodingNegotiator()

  constructor(
    private readonly blobs: BlobCache,
    private readonly log: FailureLog,
  ) {}

  /**
   * Sends a file of the version (or a content page served like one). `extra` is what the site's
   * `_headers` adds for the request path; `status` 404 sends it as a not-found page (a `_redirects`
   * 404 rule, the bundle's 404.html), without validators or ranges.
   */
  send(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, file: PreparedFile, head: boolean, extra: HeaderList, status = 200): void {
    const headers = req.headers
    const v = file.br === null && file.gzip === null ? file.identity : chooseVariant(file, this.negotiator.preferred(headers['accept-encoding']))
    if (status === 404) {
      this.sendVariant(req, res, 404, withSiteHeaders(missingHeaders(file, v, version), extra, version.preview), v, head)
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
          this.sendPartial(req, res, version, file, byteRange.start, byteRange.end, extra)
          return
        }
      }
    }
    this.sendVariant(req, res, 200, withSiteHeaders(okHeaders(file, v, version), extra, version.preview), v, head)
  }

  /** Answers a request that failed with the 500 page (or cuts the response when it has begun), and logs why. */
  fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    // The request id is the one server.ts gave the response (PlinthResponse, ops/request-tracking.ts).
    this.log.error({ err: error, reqId: (res as { requestId?: string }).requestId, host: req.headers.host, url: req.url }, 'site request failed')
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
  private sendVariant(req: IncomingMessage, res: ServerResponse, status: number, headers: string[], v: PreparedVariant, head: boolean): void {
    if (head) {
      res.writeHead(status, headers)
      res.end()
      return
    }
    const bytes = this.blobs.peek(v)
    if (bytes !== undefined) {
      res.writeHead(status, headers)
      res.end(bytes)
      return
    }
    this.blobs.load(v).then(
      (loaded) => {
        res.writeHead(status, headers)
        res.end(loaded)
      },
      (error) => this.fail(req, res, error),
    )
  }

  private sendPartial(
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
    const bytes = this.blobs.peek(file.identity)
    if (bytes !== undefined) write(bytes)
    else
      this.blobs
        .load(file.identity)
        .then(write)
        .catch((error) => this.fail(req, res, error))
  }
}
