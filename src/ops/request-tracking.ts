/**
 * Request ids and request metrics on both ways into the server: Fastify (the API, MCP, the web
 * site) through its options and hooks, and the requests answered before Fastify (published sites,
 * the OAuth server) through one cheap step in the HTTP listener. The site path is the hot one:
 * it gets an id, a timestamp and the tracker that counts it when it finishes, no closure and no
 * listener per request.
 */
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Logger } from '../log.ts'
import { type Metrics, UNMATCHED_ROUTE } from './metrics.ts'
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts'

type ResponseHeaders = OutgoingHttpHeaders | OutgoingHttpHeader[]

/** The header as responses spell it. */
const RESPONSE_HEADER = 'X-Request-Id'

/**
 * Fastify's request id options. Its own `requestIdHeader` takes any incoming value as it is, so it
 * is off and `genReqId` reads the header, keeping only a sane id. Fastify puts the id on every log
 * line of the request as `reqId`.
 */
export const REQUEST_ID_OPTIONS = {
  requestIdHeader: false,
  genReqId: (req: IncomingMessage) => requestIdOf(req.headers[REQUEST_ID_HEADER]),
} satisfies Pick<FastifyServerOptions, 'requestIdHeader' | 'genReqId'>

type FrameworkErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void

/**
 * Fastify answers a URL its router refuses (bad percent-encoding, an over-long parameter) with
 * `frameworkErrors`, before any hook: this gives those answers their id and counts them too, as
 * `unmatched`.
 */
export function trackFrameworkErrors(handler: FrameworkErrors, metrics: Metrics): FrameworkErrors {
  return (error, request, reply) => {
    const started = performance.now()
    reply.header(RESPONSE_HEADER, request.id)
    reply.raw.once('finish', () => metrics.observeRequest(UNMATCHED_ROUTE, request.method, reply.statusCode, (performance.now() - started) / 1000))
    handler(error, request, reply)
  }
}

/**
 * Returns each request's id as `X-Request-Id` and counts it by route pattern (never the raw URL,
 * so the number of series stays bounded; a request that matched no route is `unmatched`).
 * Registered first, so every route and the not-found handler have these hooks.
 */
export function trackFastifyRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(RESPONSE_HEADER, request.id)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}

/**
 * The responses of Plinth's HTTP server. One answered before Fastify knows its request id and
 * adds `X-Request-Id` to the header list it is written with. The site server writes each answer
 * with one precomputed header array, node:http's fast path; a header set beforehand with
 * setHeader would turn that into a merge, header by header, with every name and value checked
 * again, taking every warm site request off that fast path (docs/benchmarks.md).
 */
export class PlinthResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Set for requests answered before Fastify (Fastify gives its replies the header itself). */
  requestId: string | undefined = undefined
  /** When the request was handed over, for its duration. */
  startedAt = 0
  /** Counts the response once it has finished (requests answered before Fastify). */
  tracker: FinishedResponses | undefined = undefined
  /** A second party told when it has finished: the traffic counter of a site's requests (serving/site-traffic.ts). */
  observer: FinishedResponses | undefined = undefined
  /** The site it answered for, set with `observer`. */
  observedSite: string | undefined = undefined
  /** The flat header list it was written with, when it was one (the site server's answers): what the observer reads. */
  headerList: readonly OutgoingHttpHeader[] | undefined = undefined

  /**
   * node:http detaches the socket from a response in its own `finish` listener, the one every
   * response has: the moment a `finish` listener of ours would run, without adding a second
   * listener to every response (which makes node:http's emit copy the listener list each time).
   */
  override detachSocket(socket: Socket): void {
    super.detachSocket(socket)
    this.tracker?.finished(this)
    this.observer?.finished(this)
  }

  override writeHead(statusCode: number, statusMessage?: string, headers?: ResponseHeaders): this
  override writeHead(statusCode: number, headers?: ResponseHeaders): this
  override writeHead(statusCode: number, messageOrHeaders?: string | ResponseHeaders, headers?: ResponseHeaders): this {
    const id = this.requestId
    if (id === undefined) return super.writeHead(statusCode, messageOrHeaders as string, headers)
    // As node:http reads the arguments: the headers come last, after an optional status message.
    const message = typeof messageOrHeaders === 'string' ? messageOrHeaders : undefined
    const given = message === undefined ? (headers ?? (messageOrHeaders as ResponseHeaders | undefined)) : headers
    // A flat [name, value, ...] list (the site server's); anything else gets the header the usual way.
    if (Array.isArray(given) && !Array.isArray(given[0])) {
      this.headerList = given
      return super.writeHead(statusCode, message, withRequestId(given, id))
    }
    if (!this.hasHeader(RESPONSE_HEADER)) this.setHeader(RESPONSE_HEADER, id)
    return super.writeHead(statusCode, message, given)
  }
}

/** A copy of a flat header list with the request id last, allocated once at its size (a spread grows it as it goes). */
function withRequestId(headers: OutgoingHttpHeader[], id: string): OutgoingHttpHeader[] {
  const length = headers.length
  const out = new Array<OutgoingHttpHeader>(length + 2)
  for (let i = 0; i < length; i++) out[i] = headers[i]!
  out[length] = RESPONSE_HEADER
  out[length + 1] = id
  return out
}

export interface RawRequestTracking {
  metrics: Metrics
  /** The route label the requests are counted under (metrics.ts SITE_ROUTE, OAUTH_ROUTE). */
  route: string
  /**
   * Logs a line with the request id for each answer of 500 or more. For handlers that log their
   * failures without the request (oidc-provider); the site server logs its own, with the id.
   */
  log?: Logger
}

/** What counts a finished response (PlinthResponse.detachSocket calls it). */
export interface FinishedResponses {
  finished(res: PlinthResponse): void
}

/**
 * For requests answered before Fastify: gives the response its `X-Request-Id` and counts the
 * request when its response is finished. Call it with the request before handing it over.
 */
export function rawRequestTracker({ metrics, route, log }: RawRequestTracking): (req: IncomingMessage, res: PlinthResponse) => void {
  const tracker: FinishedResponses = {
    finished(res) {
      const status = res.statusCode
      metrics.observeRequest(route, res.req.method ?? 'GET', status, (performance.now() - res.startedAt) / 1000)
      if (log !== undefined && status >= 500) {
        log.error({ reqId: res.requestId, route, method: res.req.method, url: res.req.url, statusCode: status }, `${route} request failed`)
      }
    },
  }
  return (req, res) => {
    res.requestId = requestIdOf(req.headers[REQUEST_ID_HEADER])
    res.startedAt = performance.now()
    res.tracker = tracker
  }
}
