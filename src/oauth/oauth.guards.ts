/**
 * What keeps the authorization server from being turned against people or against Plinth, as
 * the library is configured (the registration rate limit per client address and the forwarding
 * headers the library reads are oauth.routes.ts's, with OAuthService.registrationWait):
 * - an authorization request that fails before the person signed in (at the authorization
 *   endpoint itself, before Plinth's sign-in and consent) is answered with an error page and
 *   never redirected to the client's address: anyone may register a client with any address,
 *   so such a redirect would be an open redirector (RFC 9700 §4.11.2). Once the person signed
 *   in and answered, errors (access_denied) go back to the app as usual;
 * - the pages the library renders (its error page, its form_post answer) carry the headers of
 *   every page of the web site, and its error page is drawn by the web site (OAuthPages).
 */
import type { Configuration, KoaContextWithOIDC, default as Provider } from 'oidc-provider'
import { PAGE_HEADERS, REDIRECTING_FORM_CSP } from '../http/page-headers.ts'

/** The form_post answer is a form sent to the app's address: `form-action` is left out, as on the consent page. */
const OAUTH_PAGE_HEADERS = { ...PAGE_HEADERS, 'Content-Security-Policy': REDIRECTING_FORM_CSP }

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

/** The pages the library renders itself, drawn by the web site (web/oauth-pages.ts). */
export interface OAuthPages {
  /** The page a refused request is answered with: what went wrong, one line each, and a way back to Plinth. */
  error(lines: string[]): Promise<string>
  /** The device flow's code page: the form that takes the user code, with what went wrong last. */
  deviceCode(page: { action: string; xsrf: string; userCode?: string; problem?: string }): Promise<string>
  /** The device flow's check: is this the code the terminal shows, and the app that asks? Continue or cancel. */
  deviceConfirm(page: { action: string; xsrf: string; userCode: string; clientName: string; from?: string }): Promise<string>
  /** The device flow's end: the device is signed in. */
  deviceDone(page: { clientName: string }): Promise<string>
}

/** The library's error page: what went wrong, in the words of the error. */
export function errorPage(pages: OAuthPages): NonNullable<Configuration['renderError']> {
  return async (ctx, out) => {
    // prompt=none refusals carry a redirect's status, meant for the app: on a page they are a bad request.
    if (ctx.status < 400) ctx.status = 400
    ctx.type = 'html'
    ctx.body = await pages.error(Object.values(out).map(String))
  }
}
