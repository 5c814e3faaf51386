/** Sign-up, sign-in and sign-out, and the account page of a signed-in person (change password, sign out everywhere). */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { OpenedSession } from '../auth/accounts.service.ts'
import { AppError } from '../core/errors.ts'
import { ACCOUNT_PASSWORD_MIN } from '../core/limits.ts'
import { accountOf, field } from './forms.ts'
import { safeReturnPath } from '../core/site-address.ts'
import { REDIRECTING_FORM_CSP } from '../http/page-headers.ts'
import { sendPage } from './pages.ts'
import { clientInfo, cookieOptions, pageContext, type WebContext } from './web-context.ts'

/** Signing in may continue into an OAuth authorization that ends at the app's own address. */
const SIGN_IN_PAGE = { headers: { 'Content-Security-Policy': REDIRECTING_FORM_CSP } }

const NOTICES: Record<string, string> = {
  password: 'Your password was changed. Every other session of your account has ended.',
}

const endSession = (web: WebContext, reply: FastifyReply) => reply.clearCookie(web.sessionCookie, cookieOptions(web))

/** Signing up, in and out: pages for anyone. */
export function signInRoutes(web: WebContext) {
  const { accounts } = web

  const startSession = (reply: FastifyReply, session: OpenedSession, next: string | null) => {
    reply.setCookie(web.sessionCookie, session.secret, cookieOptions(web, Math.floor((session.expiresAt.getTime() - Date.now()) / 1000)))
    return reply.redirect(next ?? '/dashboard', 303)
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- Fastify calls a hook with the instance as `this`, as the plugin's decorator expects
    const protect = { preHandler: app.csrfProtection, schema: { hide: true } }

    app.get<{ Querystring: { next?: string } }>('/sign-in', { schema: { hide: true } }, async (request, reply) => {
      const next = safeReturnPath(request.query.next)
      if (request.account) return reply.redirect(next ?? '/dashboard', 303)
      return sendPage(reply, pageContext(web, request, reply), 'sign-in', { title: 'Sign in · Plinth', next }, SIGN_IN_PAGE)
    })

    app.post('/sign-in', protect, async (request, reply) => {
      const email = field(request, 'email')
      const next = safeReturnPath(field(request, 'next'))
      try {
        const session = await accounts.signIn(email, field(request, 'password', { trim: false }), clientInfo(request))
        return startSession(reply, session, next)
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'SIGN_IN_FAILED') throw error
        return sendPage(reply, pageContext(web, request, reply), 'sign-in', { title: 'Sign in · Plinth', next, email, error }, { ...SIGN_IN_PAGE, status: 401 })
      }
    })

    app.get<{ Querystring: { next?: string } }>('/sign-up', { schema: { hide: true } }, async (request, reply) => {
      const next = safeReturnPath(request.query.next)
      if (request.account) return reply.redirect(next ?? '/dashboard', 303)
      const status = accounts.signup === 'open' ? 200 : 403
      return sendPage(
        reply,
        pageContext(web, request, reply),
        'sign-up',
        { title: 'Sign up · Plinth', next, minPassword: ACCOUNT_PASSWORD_MIN },
        { ...SIGN_IN_PAGE, status },
      )
    })

    app.post('/sign-up', protect, async (request, reply) => {
      const input = { email: field(request, 'email'), password: field(request, 'password', { trim: false }), name: field(request, 'name') || undefined }
      const next = safeReturnPath(field(request, 'next'))
      try {
        return startSession(reply, await accounts.signUp(input, clientInfo(request)), next)
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') throw error
        const data = { title: 'Sign up · Plinth', next, email: input.email, name: input.name, fields: error.fields ?? {}, minPassword: ACCOUNT_PASSWORD_MIN }
        return sendPage(reply, pageContext(web, request, reply), 'sign-up', data, { ...SIGN_IN_PAGE, status: 422 })
      }
    })

    app.post('/sign-out', protect, async (request, reply) => {
      if (request.account) await accounts.signOut(request.account)
      return endSession(web, reply).redirect('/', 303)
    })
  }
}

/** The account page and its forms, in the scope of requireSignIn(). */
export function accountRoutes(web: WebContext) {
  const { accounts } = web

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: { done?: string } }>('/account', { schema: { hide: true } }, async (request, reply) => {
      const notice = request.query.done ? NOTICES[request.query.done] : undefined
      return sendPage(reply, pageContext(web, request, reply), 'account', { title: 'Account · Plinth', notice, minPassword: ACCOUNT_PASSWORD_MIN })
    })

    app.post('/account/password', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      try {
        await accounts.changePassword(
          account,
          field(request, 'currentPassword', { trim: false }),
          field(request, 'newPassword', { trim: false }),
          clientInfo(request),
        )
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') throw error
        const message = error.fields?.newPassword ? `The new password ${error.fields.newPassword}.` : error.message
        const data = { title: 'Account · Plinth', error: { message }, minPassword: ACCOUNT_PASSWORD_MIN }
        return sendPage(reply, pageContext(web, request, reply), 'account', data, { status: 422 })
      }
      return reply.redirect('/account?done=password', 303)
    })

    app.post('/account/sign-out-everywhere', { schema: { hide: true } }, async (request, reply) => {
      await accounts.signOutEverywhere(accountOf(request))
      return endSession(web, reply).redirect('/sign-in', 303)
    })
  }
}
