/**
 * `GET /tls/ask?domain=D`: the on-demand TLS question of the reverse proxy in front of Plinth
 * (Caddy's `on_demand_tls { ask ... }`), asked before it gets a certificate for a name it has none
 * for. 200 when Plinth serves D (a port after it ignored), 404 when not, 400 when D is no host name. No token: the proxy
 * asks from the machine, and the answer says only what serving the name would show anyway. It is
 * an operations endpoint, not part of the API, so it is left out of the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify'
import { AppError } from '../core/errors.ts'
import { requestedHost } from './domain-names.ts'
import type { ServedDomains } from './served-domains.ts'

export function tlsAskRoutes(served: Pick<ServedDomains, 'isCertificateAllowed'>) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: { domain?: unknown } }>('/tls/ask', { schema: { hide: true } }, async (request, reply) => {
      const given = request.query.domain
      const host = typeof given === 'string' ? requestedHost(given) : null
      if (host === null) throw new AppError('BAD_REQUEST', 'Give one host name as the domain query parameter: /tls/ask?domain=www.example.com.')
      reply.header('Cache-Control', 'no-store')
      if (!(await served.isCertificateAllowed(host))) throw new AppError('NOT_FOUND', `${host} is not served here.`)
      return reply.code(200).send()
    })
  }
}
