/**
 * What keeps the authorization server from being turned against people or against Plinth:
 * - dynamic client registration is rate limited per client address (429 `too_many_requests`,
 *   with Retry-After, in the JSON error format of RFC 7591);
 * - an authorization request that fails before the person signed in (at the authorization
 *   endpoint itself, before Plinth's sign-in and consent) is answered with an error page and
 *   never redirected to the client's address: anyone may register a client with any address,
 *   so such a redirect would be an open redirector (RFC 9700 §4.11.2). Once the person signed
 *   in and answered, errors (access_denied) go back to the app as usual;
 * - the pages the library renders (its error page, its form_post answer) carry the headers of
 *   every page of the web site;
 * - the library sees the request as Plinth does: https when Plinth is served over https (its
 *   cookies are then `Secure`, as the web site's are), the client address as the trusted
 *   proxies report it, and no forwarded host.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Configuration, KoaContextWithOIDC, default as Provider } from 'oidc-provider'
import { type GuessThrottle, tryAgainIn } from '../auth/guess-throttle.ts'
import { escapeHtml } from '../core/html.ts'
import { OAUTH_REGISTRATIONS_PER_ADDRESS } from '../core/limits.ts'
import { PAGE_HEADERS, REDIRECTING_FORM_CSP } from '../http/page-headers.ts'

/** The form_post answer is a form sent to the app's address: `form-action` is left out, as on the consent page. */
const OAUTH_PAGE_HEADERS = { ...PAGE_HEADERS, 'Content-Security-Policy': REDIRECTING_FORM_CSP }

export interface RequestView {
  /** Whether Plinth is served over https (its base URL's scheme). */
  secure: boolean
  /** The client's address, as the trusted proxies report it. */
  clientAddress: (req: IncomingMessage) => string
}

/** Sets the forwarding headers the library (a Koa app trusting them) reads to what Plinth decided; the client's address. */
export function presentRequest(req: IncomingMessage, view: RequestView): string {
  const address = view.clientAddress(req)
  delete req.headers['x-forwarded-host']
  req.headers['x-forwarded-proto'] = view.secure ? 'https' : 'http'
  req.headers['x-forwarded-for'] = address
  return address
}

/**
 * Counts a registration attempt of the request's client address; when the address made too
 * many, answers 429 itself and returns true.
 */
export async function refuseRegistration(req: IncomingMessage, res: ServerResponse, throttle: GuessThrottle, address: string): Promise<boolean> {
  const subject = `oauth-registration:${address}`
  const waitSeconds = await throttle.waitSeconds([[subject, OAUTH_REGISTRATIONS_PER_ADDRESS]])
  if (waitSeconds > 0) {
    const body = JSON.stringify({
      error: 'too_many_requests',
      error_description: `Too many client registrations from this address. ${tryAgainIn(waitSeconds)}`,
    })
    res
      .writeHead(429, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Retry-After': String(waitSeconds), ...PAGE_HEADERS })
      .end(body)
    req.resume()
    return true
  }
  await throttle.recordFailure([subject])
  return false
}

/** The page headers on every answer of the library, and no redirect for a request that failed before the person signed in. */
export function installPageGuards(provider: Provider): void {
  provider.use(async (ctx, next) => {
    ctx.set(OAUTH_PAGE_HEADERS)
    await next()
  })
  const keepOnErrorPage = (ctx: KoaContextWithOIDC, error: unknown) => {
    // The library reads allow_redirect right after telling of the error, as it sets it itself
    // for requests whose parameters cannot be trusted.
    if (ctx.oidc?.route === 'authorization' && error && typeof error === 'object') (error as { allow_redirect?: boolean }).allow_redirect = false
  }
  provider.on('authorization.error', keepOnErrorPage)
  provider.on('server_error', keepOnErrorPage)
}

/** The library's error page: what went wrong, in the words of the error, and a way back to Plinth. */
export function errorPage(siteUrl: string): NonNullable<Configuration['renderError']> {
  return (ctx, out) => {
    // prompt=none refusals carry a redirect's status, meant for the app: on a page they are a bad request.
    if (ctx.status < 400) ctx.status = 400
    ctx.type = 'html'
    const lines = Object.values(out).map((v) => `<p>${escapeHtml(String(v))}</p>`)
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Could not connect</title></head><body><main><h1>Could not connect</h1>${lines.join('')}<p><a href="${escapeHtml(siteUrl)}/">Plinth</a></p></main></body></html>`
  }
}
