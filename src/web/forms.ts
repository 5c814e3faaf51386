/**
 * Reading the web site's forms and answering their failures: form fields as strings, the scope of
 * the pages that need a signed-in person (or a redirect to sign in), and the error page every
 * failure becomes.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Account } from '../auth/accounts.service.ts'
import type { Principal } from '../core/principal.ts'
import { AppError } from '../core/errors.ts'
import { statusOf } from '../http/error-status.ts'
import { errorHeaders, internalError, toAppError } from '../http/errors.http.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

/** The person as the services know callers; a session reaches what the person's own tokens reach. */
export const principalOf = (account: Account): Principal => ({
  userId: account.userId,
  email: account.email,
  name: account.name,
  tokenId: 'web-session',
  access: 'both',
  capabilities: null,
  sites: null,
})

/** A form field as one trimmed string ('' when absent, or sent as anything but one value). */
export function field(request: FastifyRequest, name: string, options: { trim?: boolean } = {}): string {
  const body = request.body as Record<string, unknown> | undefined
  const value = body && typeof body === 'object' ? body[name] : undefined
  if (typeof value !== 'string') return ''
  return options.trim === false ? value : value.trim()
}

/** The checked boxes of a field: formbody gives one value as a string, several as an array. */
export function checked(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/**
 * A refusal a form shows next to its field `name` (a known problem with what was typed), or null
 * for any other error, which the error page answers.
 */
export const fieldRefusal = (error: unknown, name: string): AppError | null => (error instanceof AppError && error.fields?.[name] ? error : null)

/**
 * Makes every route of `app`'s scope a page for a signed-in person. A form (any method but GET
 * and HEAD) is checked for its CSRF token first, so a form sent after its session ended is refused
 * as expired; then a signed-out browser is sent to sign in and back: to the page itself after a
 * GET, else to the page the form was on (or the dashboard). Handlers read the person with accountOf().
 */
export function requireSignIn(app: FastifyInstance): void {
  app.addHook('preHandler', (request, reply, done) =>
    request.method === 'GET' || request.method === 'HEAD' ? done() : app.csrfProtection(request, reply, done),
  )
  app.addHook('preHandler', async (request, reply) => {
    if (request.account) return
    const back = request.method === 'GET' ? request.url : (request.headers.referer && safeLocalReferer(request)) || '/dashboard'
    return reply.redirect(`/sign-in?next=${encodeURIComponent(back)}`, 303)
  })
}

/** The signed-in person of a request in a requireSignIn() scope. */
export function accountOf(request: FastifyRequest): Account {
  if (!request.account) throw new AppError('AUTH_REQUIRED', 'Sign in to see this page.')
  return request.account
}

function safeLocalReferer(request: FastifyRequest): string | null {
  try {
    const url = new URL(request.headers.referer as string)
    return url.host === request.headers.host ? url.pathname + url.search : null
  } catch {
    return null
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Sign-in needed',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  422: 'Not accepted',
  429: 'Too many attempts',
}

/** Every failure on a page of the web site, as a page: its status, a title, the message, and Retry-After when there is one. */
export async function sendErrorPage(web: WebContext, request: FastifyRequest, reply: FastifyReply, error: FastifyError): Promise<FastifyReply> {
  const page = errorPage(request, error)
  return sendPage(reply, pageContext(web, request, reply), 'message', page.data, { status: page.status, headers: page.headers })
}

/** The error model of the API (http/errors.http.ts), told as a page; a refused CSRF token gets words of its own. */
function errorPage(request: FastifyRequest, error: FastifyError) {
  if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
    const data = {
      title: 'This form has expired',
      lines: ['The form was sent from another site, or was open for too long. Go back, reload the page and send it again.'],
      link: { href: '/', text: 'Home' },
    }
    return { status: 403, data, headers: undefined }
  }
  let known = toAppError(error)
  if (!known) {
    request.log.error({ err: error }, 'unhandled error on a web page')
    known = internalError()
  }
  const status = statusOf(known)
  return { status, data: { title: TITLES[status] ?? 'Something went wrong', lines: [known.message] }, headers: errorHeaders(known) }
}
