/**
 * What every page of the web site shares: the session cookie (named, flagged and read here and
 * nowhere else), the signed-in account of a request, the CSRF token of its forms, and the page
 * context the views receive.
 */
import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Account, AccountsService, ClientInfo } from '../auth/accounts.service.ts'
import type { Config } from '../config.ts'
import type { WebAssets } from './assets.ts'
import type { PageContext } from './pages.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The person signed in on the web site, from the session cookie; never set on /v1 or /mcp. */
    account: Account | null
  }
}

export interface WebContext {
  config: Config
  accounts: AccountsService
  /** Whether the web site is on https: cookies are then `Secure` and `__Host-` prefixed. */
  secure: boolean
  sessionCookie: string
  csrfCookie: string
  assets: WebAssets['tags']
}

export function webContext(config: Config, accounts: AccountsService, assets: WebContext['assets']): WebContext {
  const secure = config.siteScheme === 'https'
  // `__Host-` cookies are host-only, Secure and Path=/, so no other host (a published site under
  // the same domain included) can set or overwrite them.
  const prefix = secure ? '__Host-' : ''
  return { config, accounts, secure, sessionCookie: `${prefix}plinth_session`, csrfCookie: `${prefix}plinth_csrf`, assets }
}

/** `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` on https. */
export const cookieOptions = (web: WebContext, maxAgeSeconds?: number): CookieSerializeOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: web.secure,
  path: '/',
  ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
})

/**
 * What a CSRF token is bound to: the request's session, so a token taken from one session is
 * worthless in another; forms shown signed out (sign-in, sign-up) share one binding.
 */
export const csrfUserInfo = (request: FastifyRequest): string => request.account?.sessionId ?? 'signed-out'

export function pageContext(web: WebContext, request: FastifyRequest, reply: FastifyReply): PageContext {
  return {
    account: request.account,
    csrf: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
    path: request.url.split('?')[0]!,
    signupOpen: web.accounts.signup === 'open',
    assets: web.assets,
  }
}

export function clientInfo(request: FastifyRequest): ClientInfo {
  const agent = request.headers['user-agent']
  return { address: request.ip, userAgent: typeof agent === 'string' ? agent : null }
}
