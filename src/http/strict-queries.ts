/**
 * The API's query parameters are held to their route's schema, as bodies are: a parameter the
 * route does not take is 422 VALIDATION_FAILED naming it (`?limt=5` would otherwise be answered as
 * if it were not there). A route that takes no query gets a schema taking none, and the 422 in its
 * documented responses; a route's own query schema must refuse other parameters itself, or the
 * app fails to build.
 */
import { Type } from 'typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { ERROR_STATUS } from './error-status.ts'
import { errorResponses } from './openapi.ts'

/** The query of a route that takes none. */
const NO_QUERY = Type.Object({}, { additionalProperties: false })

const REFUSED = ERROR_STATUS.VALIDATION_FAILED
/** The documented answer to a parameter the route does not take. */
const REFUSED_RESPONSE = errorResponses(['VALIDATION_FAILED'])[REFUSED] as { description: string }

interface RouteSchema {
  hide?: boolean
  querystring?: { additionalProperties?: unknown }
  response?: Record<number, { description?: string }>
}

/** Applies the rule to every route of `scope` registered after this call whose path starts with `prefix`. */
export function strictQueries(scope: FastifyInstance, prefix: string): void {
  scope.addHook('onRoute', (route: RouteOptions) => {
    const schema = (route.schema ?? {}) as RouteSchema
    // Hidden routes are not the API's operations: a wrong method's 405 stays a 405, whatever the query.
    if (!route.url.startsWith(prefix) || schema.hide === true) return
    if (schema.querystring !== undefined) {
      if (schema.querystring.additionalProperties === false) return
      throw new Error(`${String(route.method)} ${route.url}: its query schema must refuse parameters it does not name (additionalProperties: false)`)
    }
    route.schema = { ...schema, querystring: NO_QUERY, response: { ...schema.response, [REFUSED]: withRefusal(schema.response?.[REFUSED]) } }
  })
}

/** A route's documented 422, naming VALIDATION_FAILED among its codes. */
function withRefusal(documented: { description?: string } | undefined): { description?: string } {
  if (documented === undefined) return REFUSED_RESPONSE
  if (documented.description?.includes('`VALIDATION_FAILED`')) return documented
  return { ...documented, description: `${documented.description ?? ''}; ${REFUSED_RESPONSE.description}` }
}
