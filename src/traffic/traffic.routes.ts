import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, errorResponses, success } from '../http/openapi.ts'
import { WebsiteParams } from '../websites/websites.schemas.ts'
import { SiteTrafficSchema, TRAFFIC_RANGE_HELP, TrafficQuery } from './traffic.schemas.ts'
import type { TrafficService } from './traffic.service.ts'

/** A site's traffic under /v1 (authenticated): owners and editors read it; anyone else gets 404. */
export function trafficRoutes(traffic: TrafficService): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.get(
      '/websites/:websiteId/traffic',
      {
        schema: {
          operationId: 'getSiteTraffic',
          tags: ['Traffic'],
          security,
          summary: "A site's traffic",
          description: `Requests, page views, unique visitors, bytes, 404s and bots of the live site, counted by the server (no cookie, no script), by hour or by day, with the top paths, the referring hosts and the paths answered 404 with the pages that linked there. Figures are written every few seconds, so the last seconds may not show yet. ${TRAFFIC_RANGE_HELP} Owners and editors.`,
          params: WebsiteParams,
          querystring: TrafficQuery,
          response: {
            200: success(SiteTrafficSchema, "The site's traffic."),
            ...errorResponses([...AUTH_ERRORS, 'BAD_REQUEST', 'NOT_FOUND', 'VALIDATION_FAILED']),
          },
        },
      },
      async (request) => traffic.siteTraffic(principalOf(request), request.params.websiteId, request.query),
    )
  }
}
