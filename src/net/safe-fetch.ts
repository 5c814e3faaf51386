/**
 * Fetches a URL a user gave us without letting them aim the server at itself or its network
 * (SSRF). The address check runs inside the connector, on the very addresses the socket then
 * connects to, so a DNS answer cannot change between check and connect (rebinding); IP-literal
 * URLs are checked before anything is sent. Redirects are followed by hand, each hop checked
 * the same way. The body is streamed and cut off past the size cap. No cookies, no credentials,
 * no Authorization header ever leave: only a plain User-Agent and Accept, and the headers a caller
 * that POSTs (webhook deliveries) gives with its body.
 */
import dns from 'node:dns'
import net, { type LookupFunction } from 'node:net'
import tls from 'node:tls'
import { pipeline, type Readable } from 'node:stream'
import zlib from 'node:zlib'
import type { Agent, buildConnector } from 'undici'
import { AppError } from '../core/errors.ts'
import { clipped, quoted } from '../core/text.ts'
import { isHostAllowed, normalizeHostSet } from './allow-hosts.ts'
import { addressProblem } from './public-address.ts'

export interface ResolvedAddress {
  address: string
  family: number
}

export interface SafeFetchOptions {
  /** Hosts (name or IP literal, optionally `:port`) exempt from the address check; see allow-hosts.ts. */
  allowHosts: ReadonlySet<string>
  maxBytes: number
  connectTimeoutMs: number
  /** For the whole fetch: every hop, headers and body. */
  totalTimeoutMs: number
  maxRedirects: number
  /** Default `Plinth/1.0`; callers pass `Plinth/1.0 (+{site_url})`. */
  userAgent?: string
  accept?: string
  /** Certificate authorities trusted on top of the system's (PEM), for intranets and tests. */
  ca?: string
  /** Name resolution; the system resolver unless given (tests resolve names to chosen addresses). */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>
  /** `GET` unless given. Redirects are followed for GET only. */
  method?: 'GET' | 'POST'
  /** The request body (with method POST). */
  body?: string
  /** More request headers, such as the body's Content-Type. */
  headers?: Record<string, string>
  /** Answer any final status (a redirect not followed included) instead of throwing on one that is not 2xx. */
  anyStatus?: boolean
  /** Leave the answer's body unread (bytes is empty): the status is all the caller wants. */
  discardBody?: boolean
  /** Stops the fetch from outside (a stopping server); it then fails as timed out would. */
  signal?: AbortSignal
}

export interface SafeFetchResult {
  finalUrl: string
  status: number
  contentType: string | null
  bytes: Buffer
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
}

const systemResolve = (hostname: string): Promise<ResolvedAddress[]> => dns.promises.lookup(hostname, { all: true, verbatim: true })

const fetchFailed = (message: string, cause?: unknown) => new AppError('FETCH_FAILED', message, cause === undefined ? {} : { cause })

/** Raised inside the connector; carries the words for the final message. */
class BlockedAddressError extends Error {
  readonly code = 'PLINTH_ADDRESS_BLOCKED'
}

const blockedMessage = (host: string, address: string, problem: string) =>
  `${host === address ? `${address} is` : `${host} resolves to ${address},`} ${problem}. Only public addresses are fetched (PLINTH_FETCH_ALLOW_HOSTS can allow named hosts).`
const blocked = (href: string, reason: string) => fetchFailed(`Fetching ${href} was blocked: ${reason}`)

/** undici, loaded on the first fetch: most processes (the CLI, an instance no one imports images into) never fetch. */
type Undici = typeof import('undici')
let undici: Promise<Undici> | undefined

export async function safeFetch(url: string, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const library = await (undici ??= import('undici'))
  const allow = normalizeHostSet(options.allowHosts)
  // Checked before the timer and the agent exist: a URL refused here leaves neither behind.
  let current = checkUrl(url, allow)
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.totalTimeoutMs)
  const stop = () => controller.abort()
  options.signal?.addEventListener('abort', stop, { once: true })
  if (options.signal?.aborted) controller.abort()
  const agent = new library.Agent({
    connect: guardedConnector(library, allow, options),
    headersTimeout: options.totalTimeoutMs,
    bodyTimeout: options.totalTimeoutMs,
  })
  try {
    for (let hop = 0; ; hop++) {
      const response = await send(library, agent, current, options, controller.signal)
      const follow = (options.method ?? 'GET') === 'GET' && hop < options.maxRedirects
      if (options.anyStatus && (!REDIRECT_STATUSES.has(response.statusCode) || !follow)) {
        const contentType = response.headers['content-type']
        const answer = { finalUrl: current.href, status: response.statusCode, contentType: typeof contentType === 'string' ? contentType : null }
        if (options.discardBody) {
          discard(response.body)
          return { ...answer, bytes: Buffer.alloc(0) }
        }
        return {
          ...answer,
          bytes: await readCapped(decoded(response.body, response.headers['content-encoding'], current.href), options.maxBytes, current.href),
        }
      }
      if (REDIRECT_STATUSES.has(response.statusCode)) {
        discard(response.body)
        const location = response.headers.location
        if (typeof location !== 'string' || location === '') {
          throw fetchFailed(`${clipped(current.href)} answered HTTP ${response.statusCode} without a Location to redirect to.`)
        }
        if (hop >= options.maxRedirects) throw fetchFailed(`${clipped(url)} redirected more than ${options.maxRedirects} times; gave up.`)
        current = checkUrl(location, allow, current)
        continue
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        discard(response.body)
        throw fetchFailed(`${clipped(current.href)} answered HTTP ${response.statusCode}${hop > 0 ? ` (after redirects from ${clipped(url)})` : ''}.`)
      }
      const declared = Number(response.headers['content-length'])
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        discard(response.body)
        throw tooLarge(current.href, options.maxBytes)
      }
      const bytes = await readCapped(decoded(response.body, response.headers['content-encoding'], current.href), options.maxBytes, current.href)
      const contentType = response.headers['content-type']
      return { finalUrl: current.href, status: response.statusCode, contentType: typeof contentType === 'string' ? contentType : null, bytes }
    }
  } catch (error) {
    throw explain(error, current, options, controller.signal.aborted)
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', stop)
    // The agent served this fetch alone; closing it fails only when it is closed already.
    agent.destroy().catch(() => {})
  }
}

function send({ request }: Undici, agent: Agent, target: URL, options: SafeFetchOptions, signal: AbortSignal) {
  return request(target, {
    dispatcher: agent,
    method: options.method ?? 'GET',
    signal,
    body: options.body,
    headers: {
      ...options.headers,
      'user-agent': options.userAgent ?? 'Plinth/1.0',
      accept: options.accept ?? '*/*',
      'accept-encoding': 'identity',
    },
  })
}

/** Parses (relative to `base` for a redirect) and refuses what must never be requested. */
function checkUrl(raw: string, allow: ReadonlySet<string>, base?: URL): URL {
  let target: URL
  try {
    target = new URL(raw, base)
  } catch {
    throw fetchFailed(`${quoted(raw)} is not a valid URL.`)
  }
  const where = base ? ` (redirected to from ${clipped(base.href)})` : ''
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw fetchFailed(`${clipped(target.protocol, 40)} URLs are not fetched${where}: only http and https.`)
  }
  if (target.username || target.password) {
    throw fetchFailed(`URLs carrying a user name or password are not fetched${where}: credentials are never sent.`)
  }
  target.hash = ''
  const literal = target.hostname.replace(/^\[|\]$/g, '')
  if (net.isIP(literal) && !isHostAllowed(allow, target.hostname, effectivePort(target))) {
    const problem = addressProblem(literal)
    if (problem) throw blocked(`${clipped(target.href)}${where}`, blockedMessage(literal, literal, problem))
  }
  return target
}

const effectivePort = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80)

/**
 * A connector that checks every address a socket is about to use. Allowed hosts skip the check;
 * IP literals are checked here again (the socket does no lookup for them); names are resolved
 * by our lookup, which refuses the host when any of its addresses is not public.
 */
function guardedConnector({ buildConnector }: Undici, allow: ReadonlySet<string>, options: SafeFetchOptions): buildConnector.connector {
  const resolve = options.resolve ?? systemResolve
  const connector = (check: boolean) =>
    buildConnector({
      timeout: options.connectTimeoutMs,
      lookup: resolvingLookup(resolve, check),
      ...(options.ca ? { ca: [...tls.rootCertificates, options.ca] } : {}),
    })
  const checked = connector(true)
  const unchecked = connector(false)
  return (connectOptions, callback) => {
    const { hostname, protocol } = connectOptions
    const port = connectOptions.port ? Number(connectOptions.port) : protocol === 'https:' ? 443 : 80
    if (isHostAllowed(allow, hostname, port)) return unchecked(connectOptions, callback)
    if (net.isIP(hostname)) {
      const problem = addressProblem(hostname)
      if (problem) {
        queueMicrotask(() => callback(new BlockedAddressError(blockedMessage(hostname, hostname, problem)), null))
        return
      }
    }
    return checked(connectOptions, callback)
  }
}

/**
 * The socket's name lookup. With `check`, a host is refused when any of its addresses is not
 * public: the socket connects only to the addresses handed back here, so nothing can slip
 * between the check and the connection.
 */
function resolvingLookup(resolve: (hostname: string) => Promise<ResolvedAddress[]>, check: boolean): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' })
        for (const { address } of check ? addresses : []) {
          const problem = addressProblem(address)
          if (problem) throw new BlockedAddressError(blockedMessage(hostname, address, problem))
        }
        const family = lookupOptions.family
        const wanted = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses
        if (lookupOptions.all) (callback as (error: null, all: ResolvedAddress[]) => void)(null, wanted)
        else callback(null, wanted[0]?.address ?? '', wanted[0]?.family ?? 4)
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 4))
  }
}

/** The body as sent, or decoded when the server compressed it anyway (the cap applies to decoded bytes). */
function decoded(body: Readable, encoding: string | string[] | undefined, href: string): Readable {
  const name = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase()
  if (name === '' || name === 'identity') return body
  const decoder = DECODERS[name]
  if (!decoder) {
    discard(body)
    throw fetchFailed(`${clipped(href)} sent its body in an unsupported encoding (${name.slice(0, 50)}).`)
  }
  return pipeline(body, decoder(), () => {})
}

/** Drops a body we will not read; the abort it causes is expected, not an error to report. */
function discard(body: Readable): void {
  body.on('error', () => {})
  body.destroy()
}

async function readCapped(body: Readable, maxBytes: number, href: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length
    // Leaving the loop destroys the stream, which aborts the download.
    if (size > maxBytes) throw tooLarge(href, maxBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

const tooLarge = (href: string, maxBytes: number) =>
  fetchFailed(
    `${clipped(href)} is larger than ${maxBytes} bytes (${(maxBytes / 1048576).toFixed(maxBytes % 1048576 ? 2 : 0)} MiB), the most fetched; stopped reading.`,
  )

/** Turns whatever went wrong into a FETCH_FAILED that says exactly why. */
function explain(error: unknown, target: URL, options: SafeFetchOptions, timedOut: boolean): AppError {
  if (error instanceof AppError) return error
  const e = error as NodeJS.ErrnoException & { cause?: unknown }
  const inner = (e?.cause ?? e) as NodeJS.ErrnoException
  const refusal = [e, inner].find((x) => x instanceof BlockedAddressError)
  if (refusal) return blocked(clipped(target.href), refusal.message)
  if (timedOut) return fetchFailed(`Fetching ${clipped(target.href)} took longer than ${options.totalTimeoutMs} ms; stopped.`, error)
  const code = e?.code ?? inner?.code
  const host = target.host
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return fetchFailed(`Could not connect to ${host} within ${options.connectTimeoutMs} ms.`, error)
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return fetchFailed(`Fetching ${clipped(target.href)} took longer than ${options.totalTimeoutMs} ms; stopped.`, error)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return fetchFailed(`The host ${target.hostname} could not be resolved (${code}).`, error)
    case 'ECONNREFUSED':
      return fetchFailed(`${host} refused the connection.`, error)
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return fetchFailed(`${host} closed the connection before the response was complete.`, error)
    default:
      if (typeof code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) {
        return fetchFailed(`The TLS connection to ${host} failed (${code}).`, error)
      }
      return fetchFailed(`Fetching ${clipped(target.href)} failed${code ? ` (${code})` : ''}: ${String(e?.message ?? error).slice(0, 200)}`, error)
  }
}
