/**
 * Connecting an MCP client by OAuth: the authorization server (oauth/) sends the browser to
 * `/connect/{uid}`, where the person signs in (if not yet) and allows or denies the app; an app
 * allowed before is let through at once. The dashboard lists connected apps and disconnects them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { OAuthEndpoint } from '../oauth/oauth.routes.ts'
import type { OAuthService } from '../oauth/oauth.service.ts'
import { accountOf, field } from './forms.ts'
import { REDIRECTING_FORM_CSP } from '../http/page-headers.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

type ConnectRequest = FastifyRequest<{ Params: { uid: string } }>

export function connectRoutes(web: WebContext, oauth: OAuthService, endpoint: OAuthEndpoint) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Params: { uid: string } }>('/connect/:uid', { schema: { hide: true } }, async (request: ConnectRequest, reply) => {
      const account = accountOf(request)
      const step = await endpoint.consent(request.raw, reply.raw, account.userId)
      // Allowed before: no question asked again.
      if ('redirectTo' in step) return reply.redirect(step.redirectTo, 303)
      const consent = step.page
      const data = { title: `Connect ${consent.clientName} · Plinth`, consent, resource: oauth.resource }
      return sendPage(reply, pageContext(web, request, reply), 'connect', data, { headers: { 'Content-Security-Policy': REDIRECTING_FORM_CSP } })
    })

    app.post<{ Params: { uid: string } }>('/connect/:uid', { schema: { hide: true } }, async (request: ConnectRequest, reply) => {
      const account = accountOf(request)
      const allow = field(request, 'decision') === 'allow'
      return reply.redirect(await endpoint.decide(request.raw, reply.raw, account.userId, allow), 303)
    })

    app.post('/dashboard/apps/disconnect', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await oauth.disconnect(account.userId, field(request, 'clientId'))
      return reply.redirect('/dashboard?done=disconnected', 303)
    })
  }
}
