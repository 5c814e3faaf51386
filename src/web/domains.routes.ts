/**
 * A site's custom domains on the dashboard: the list with each domain's state and the TXT record
 * that proves control of it, and (for the owner) the forms to add, verify and remove one. Custom
 * domains are managed here only, as the signed-in person: no token reaches them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Account } from '../auth/accounts.service.ts'
import type { DomainsService } from '../domains/domains.service.ts'
import { statusOf } from '../http/error-status.ts'
import { accountOf, field, fieldRefusal, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface DomainPageServices {
  domains: DomainsService
}

const NOTICES: Record<string, string> = {
  'domain-added': 'The domain was added. Create its TXT record, then verify it.',
  'domain-verified': 'The domain is verified: the site is served there once its DNS points at this Plinth.',
  'domain-removed': 'The domain was removed. The site is no longer served there.',
}

type DomainParams = { Params: { websiteId: string }; Querystring: { done?: string } }

export function domainRoutes(web: WebContext, services: DomainPageServices) {
  const { domains } = services
  const pagePath = (websiteId: string) => `/dashboard/sites/${encodeURIComponent(websiteId)}/domains`

  const domainsPage = async (
    request: FastifyRequest<DomainParams>,
    reply: FastifyReply,
    account: Account,
    extra: Record<string, unknown> = {},
    status = 200,
  ) => {
    const listed = await domains.list(principalOf(account), request.params.websiteId)
    const data = {
      title: `Custom domains · ${listed.site.name} · Plinth`,
      ...listed,
      notice: request.query.done ? NOTICES[request.query.done] : undefined,
      ...extra,
    }
    return sendPage(reply, pageContext(web, request, reply), 'domains', data, { status })
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<DomainParams>('/dashboard/sites/:websiteId/domains', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      return domainsPage(request, reply, account)
    })

    app.post<DomainParams>('/dashboard/sites/:websiteId/domains', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const typed = field(request, 'domain')
      try {
        await domains.add(principalOf(account), request.params.websiteId, typed)
      } catch (error) {
        const refused = fieldRefusal(error, 'domain')
        if (!refused) throw error
        return domainsPage(request, reply, account, { addError: { message: refused.message }, typedDomain: typed }, statusOf(refused))
      }
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=domain-added`, 303)
    })

    app.post<DomainParams>('/dashboard/sites/:websiteId/domains/verify', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const domain = field(request, 'domain')
      try {
        await domains.verify(principalOf(account), request.params.websiteId, domain)
      } catch (error) {
        const refused = fieldRefusal(error, 'domain')
        if (!refused) throw error
        return domainsPage(request, reply, account, { verifyError: { message: refused.message }, checkedDomain: domain }, statusOf(refused))
      }
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=domain-verified`, 303)
    })

    app.post<DomainParams>('/dashboard/sites/:websiteId/domains/remove', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await domains.remove(principalOf(account), request.params.websiteId, field(request, 'domain'))
      return reply.redirect(`${pagePath(request.params.websiteId)}?done=domain-removed`, 303)
    })
  }
}
