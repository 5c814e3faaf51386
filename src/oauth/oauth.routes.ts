/**
 * The OAuth authorization server over HTTP. server.ts hands it the raw Node requests for the
 * server's endpoints and metadata, before Fastify; the web site's consent page
 * (web/connect.routes.ts) reads an interaction and gives its answer through it. oidc-provider reads
 * and writes the requests; OAuthService decides which client, which grant, and whether to ask.
 *
 * What it adds to the library's own handling:
 * - RFC 8414 metadata is the OpenID one, as oidc-provider serves it;
 * - a scope Plinth does not know is ignored, a request with no scope of the resources asks for
 *   `mcp`, and `mcp` asks for every capability's scope (oauth-scopes.ts);
 * - dynamic client registration is rate limited per client address (429 `too_many_requests`,
 *   with Retry-After, in the JSON error format of RFC 7591);
 * - the library sees the request as Plinth does: https when Plinth is served over https (its
 *   cookies are then `Secure`, as the web site's are), the client address as the trusted
 *   proxies report it, and no forwarded host;
 * - a failure of ours is a JSON `server_error`, logged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tryAgainIn } from '../auth/guess-throttle.ts'
import type { Config } from '../config.ts'
import { AppError } from '../core/errors.ts'
import { PAGE_HEADERS } from '../http/page-headers.ts'
import type { Logger } from '../log.ts'
import { OAUTH_PATHS, OAUTH_ROUTES } from './oauth-paths.ts'
import { authorizationScope } from './oauth-scopes.ts'
import type { OAuthService } from './oauth.service.ts'
import type { ConsentChoice, ConsentRequest, Interaction } from './oauth-consent.ts'

const ROUTE_PATHS: readonly string[] = Object.values(OAUTH_ROUTES)

export interface OAuthEndpointOptions {
  oauth: OAuthService
  config: Pick<Config, 'baseUrl'>
  /** The client's address of a raw request, as the trusted proxies report it. */
  clientAddress: (req: IncomingMessage) => string
  log: Logger
}

export class OAuthEndpoint {
  private readonly oauth: OAuthService
  private readonly options: OAuthEndpointOptions
  /** Whether Plinth is served over https (its base URL's scheme). */
  private readonly secure: boolean

  constructor(options: OAuthEndpointOptions) {
    this.options = options
    this.oauth = options.oauth
    this.secure = options.config.baseUrl.startsWith('https:')
  }

  /**
   * Whether a raw request is for the authorization server: one of its endpoints (or a path below
   * one), or its metadata. Any other path, under /oauth/ too, is the API's unknown path (its 404 envelope).
   */
  handles(url: string | undefined): boolean {
    const path = (url ?? '').split('?', 1).join('')
    if (path.startsWith(OAUTH_PATHS.prefix)) return ROUTE_PATHS.some((route) => path === route || path.startsWith(`${route}/`))
    return path === OAUTH_PATHS.discovery || path === OAUTH_PATHS.rfc8414Discovery
  }

  /** Answers a raw request for the authorization server. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://plinth.invalid')
    if (url.pathname === OAUTH_PATHS.rfc8414Discovery) req.url = OAUTH_PATHS.discovery
    if (url.pathname === OAUTH_PATHS.authorize) {
      url.searchParams.set('scope', authorizationScope(url.searchParams.get('scope')))
      req.url = url.pathname + url.search
    }
    this.dispatch(req, res, url).catch((error: unknown) => {
      this.options.log.error({ err: error }, 'OAuth request failed')
      if (res.headersSent) return res.destroy()
      res.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      res.end(JSON.stringify({ error: 'server_error', error_description: 'The authorization server failed; try again.' }))
    })
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const address = this.present(req)
    if (url.pathname === OAUTH_PATHS.register && req.method === 'POST') {
      const waitSeconds = await this.oauth.registrationWait(address)
      if (waitSeconds > 0) return refuseRegistration(req, res, waitSeconds)
    }
    const { handler } = await this.oauth.authorizationServer()
    await handler(req, res)
  }

  /**
   * The consent step of the interaction a request of the consent page belongs to, for a signed-in
   * person: where the browser goes next when the person allowed this app before, else what the
   * consent page shows. NOT_FOUND when the interaction expired or is unknown.
   */
  async consent(req: IncomingMessage, res: ServerResponse, userId: string): Promise<{ redirectTo: string } | { page: ConsentRequest }> {
    const step = await this.oauth.consent(await this.interaction(req, res), userId)
    if ('page' in step) return step
    return { redirectTo: await this.finish(req, res, step.answer) }
  }

  /** Ends the interaction with the person's answer; where the browser goes next (the authorization endpoint, which then sends it back to the app). */
  /** `choice`: what the person let the app do (checked by the caller); absent, what it asked. */
  async decide(req: IncomingMessage, res: ServerResponse, userId: string, allow: boolean, choice?: ConsentChoice): Promise<string> {
    return this.finish(req, res, await this.oauth.decide(await this.interaction(req, res), userId, allow, choice))
  }

  private async interaction(req: IncomingMessage, res: ServerResponse): Promise<Interaction> {
    const { provider, library } = await this.oauth.authorizationServer()
    // The consent page's requests reach the library through the web site.
    this.present(req)
    try {
      return await provider.interactionDetails(req, res)
    } catch (error) {
      const { errors } = library
      if (error instanceof errors.SessionNotFound || error instanceof errors.InvalidRequest) {
        throw new AppError('NOT_FOUND', 'This sign-in request has expired or was already used. Start connecting again from the app.')
      }
      throw error
    }
  }

  private async finish(req: IncomingMessage, res: ServerResponse, answer: Awaited<ReturnType<OAuthService['decide']>>): Promise<string> {
    const { provider } = await this.oauth.authorizationServer()
    // The answer is whole: nothing of an earlier submission of this interaction is kept.
    return provider.interactionResult(req, res, answer, { mergeWithLastSubmission: false })
  }

  /** Sets the forwarding headers the library (a Koa app trusting them) reads to what Plinth decided; the client's address. */
  private present(req: IncomingMessage): string {
    const address = this.options.clientAddress(req)
    delete req.headers['x-forwarded-host']
    req.headers['x-forwarded-proto'] = this.secure ? 'https' : 'http'
    req.headers['x-forwarded-for'] = address
    return address
  }
}

/** 429 in the JSON error format of RFC 7591, with Retry-After; the body is not read. */
function refuseRegistration(req: IncomingMessage, res: ServerResponse, waitSeconds: number): void {
  const body = JSON.stringify({
    error: 'too_many_requests',
    error_description: `Too many client registrations from this address. ${tryAgainIn(waitSeconds)}`,
  })
  res
    .writeHead(429, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Retry-After': String(waitSeconds), ...PAGE_HEADERS })
    .end(body)
  req.resume()
}
