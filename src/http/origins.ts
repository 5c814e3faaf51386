/**
 * DNS-rebinding and cross-site protection for /mcp and the web site's forms: a browser always
 * names the page that sent a request in `Origin`, so a request from a page that is not Plinth's
 * own is refused before any work. Requests without `Origin` (agents, CLIs, SDK clients) pass.
 */
import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'
import { AppError } from '../core/errors.ts'

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/** The API and web site origins; for a local install also their other loopback spellings. */
export function allowedOrigins(config: Pick<Config, 'baseUrl' | 'siteUrl'>): Set<string> {
  const origins = new Set<string>()
  for (const base of [config.baseUrl, config.siteUrl]) {
    const url = new URL(base)
    origins.add(url.origin)
    if (!LOOPBACK_NAMES.includes(url.hostname)) continue
    for (const name of LOOPBACK_NAMES) {
      const variant = new URL(base)
      variant.hostname = name
      origins.add(variant.origin)
    }
  }
  return origins
}

/** The exact origin (scheme, host and port): another local server's page is another origin. */
function originOf(header: string): string | null {
  try {
    const url = new URL(header)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null
  } catch {
    return null
  }
}

export interface OriginPolicy {
  /** Also accept the origin of the host the request was sent to: web forms, reached by whatever address the person uses. */
  sameHost?: boolean
  /** The message of the 403, saying what was refused. */
  refusal: string
}

/** An onRequest hook refusing, with 403 ORIGIN_NOT_ALLOWED, an Origin that is not Plinth's. */
export function checkOrigin(config: Pick<Config, 'baseUrl' | 'siteUrl'>, policy: OriginPolicy) {
  const allowed = allowedOrigins(config)
  // eslint-disable-next-line @typescript-eslint/require-await -- a Fastify hook without `done` is async; the web site's hook awaits it too
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.origin
    if (header === undefined) return
    const origin = originOf(header)
    const own = origin !== null && (allowed.has(origin) || (policy.sameHost === true && new URL(origin).host === request.headers.host))
    if (!own) throw new AppError('ORIGIN_NOT_ALLOWED', policy.refusal)
  }
}
