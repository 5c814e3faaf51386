/**
 * Connecting an MCP client by OAuth: the authorization server (oauth/) sends the browser to
 * `/connect/{uid}`, where the person signs in (if not yet) and allows or denies the app, choosing
 * what it may do and which sites it reaches (the boxes start as the app asked: every capability
 * for `mcp`, every site); an app allowed before is let through at once. The dashboard lists
 * connected apps and disconnects them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TokensService } from '../auth/tokens.service.ts'
import { validationFailed } from '../core/errors.ts'
import type { OAuthEndpoint } from '../oauth/oauth.routes.ts'
import type { OAuthService } from '../oauth/oauth.service.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { accountOf, field } from './forms.ts'
import { REDIRECTING_FORM_CSP } from '../http/page-headers.ts'
import { sendPage } from './pages.ts'
import { capabilityChoices, chosenScope, siteChoices } from './token-scope.ts'
import { pageContext, type WebContext } from './web-context.ts'

type ConnectRequest = FastifyRequest<{ Params: { uid: string } }>

export interface ConnectServices {
  oauth: OAuthService
  endpoint: OAuthEndpoint
  tokens: Pick<TokensService, 'checkScope'>
  websites: Pick<WebsiteQueries, 'list'>
}

export function connectRoutes(web: WebContext, { oauth, endpoint, tokens, websites }: ConnectServices) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Params: { uid: string } }>('/connect/:uid', { schema: { hide: true } }, async (request: ConnectRequest, reply) => {
      const account = accountOf(request)
      const step = await endpoint.consent(request.raw, reply.raw, account.userId)
      // Allowed before: no question asked again.
      if ('redirectTo' in step) return reply.redirect(step.redirectTo, 303)
      const consent = step.page
      const data = {
        title: `Connect ${consent.clientName} · Plinth`,
        consent,
        resource: oauth.resource,
        capabilityChoices: capabilityChoices(consent.capabilities),
        siteChoices: await siteChoices(websites, account),
      }
      return sendPage(reply, pageContext(web, request, reply), 'connect', data, { headers: { 'Content-Security-Policy': REDIRECTING_FORM_CSP } })
    })

    app.post<{ Params: { uid: string } }>('/connect/:uid', { schema: { hide: true } }, async (request: ConnectRequest, reply) => {
      const account = accountOf(request)
      const allow = field(request, 'decision') === 'allow'
      let choice
      if (allow && field(request, 'scoped') === '1') {
        const { fields, scope } = await tokens.checkScope(account.userId, chosenScope(request))
        if (Object.keys(fields).length) throw validationFailed(fields)
        choice = scope
      }
      return reply.redirect(await endpoint.decide(request.raw, reply.raw, account.userId, allow, choice), 303)
    })

    app.post('/dashboard/apps/disconnect', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await oauth.disconnect(account.userId, field(request, 'clientId'))
      return reply.redirect('/dashboard?done=disconnected', 303)
    })
  }
}
