import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import type { Config } from '../config.ts'
import { capabilitiesFor, type CapabilityNeed, mayEverCall, requireCapability } from '../core/capabilities.ts'
import { restNeed } from '../core/capability-map.ts'
import { type Surface, TOKEN_SCOPE } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { HttpError } from '../http/errors.http.ts'
import type { Principal } from '../core/principal.ts'
import { type TokensService, tokenReaches } from './tokens.service.ts'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** What the route needs of a token (core/capability-map.ts), set when it is registered. */
    capability?: CapabilityNeed
  }
}

export const resourceMetadataUrl = (config: Config, surface: Surface): string =>
  `${config.baseUrl}/.well-known/oauth-protected-resource${surface === 'mcp' ? '/mcp' : ''}`

const REASONS = {
  missing: 'Send a personal access token as "Authorization: Bearer plinth_...", or an OAuth access token (see WWW-Authenticate).',
  invalid: 'The access token is not valid.',
  expired: 'The access token has expired; mint a new one.',
  revoked: 'The access token was revoked; mint a new one.',
} as const

/**
 * Resolves the bearer token of a request and checks that it reaches this surface. Runs as an
 * onRequest hook, before the body is read, so anonymous callers cannot make us parse large bodies.
 */
export function authenticate(config: Config, tokens: TokensService, surface: Surface) {
  const challenge = (extra = '') =>
    `Bearer resource_metadata="${resourceMetadataUrl(config, surface)}"${surface === 'mcp' ? `, scope="${TOKEN_SCOPE}"` : ''}${extra}`

  return async (request: FastifyRequest): Promise<void> => {
    const result = await tokens.authenticate(request.headers.authorization)
    if (!result.ok) {
      const error = result.reason === 'missing' ? '' : `, error="invalid_token", error_description="${REASONS[result.reason]}"`
      throw new HttpError('AUTH_REQUIRED', REASONS[result.reason], { 'WWW-Authenticate': challenge(error) })
    }
    if (!tokenReaches(result.principal.access, surface)) {
      throw new HttpError(
        'TOKEN_NOT_ALLOWED',
        `This token is limited to ${result.principal.access === 'mcp' ? 'the MCP server' : 'the REST API'}; mint a token with ${surface === 'mcp' ? 'MCP' : 'REST'} access.`,
        { 'WWW-Authenticate': challenge(', error="insufficient_scope"') },
      )
    }
    request.principal = result.principal
  }
}

/**
 * Makes every route of `app`'s scope (registered after this call) say what it needs of a token,
 * from core/capability-map.ts by its operationId, and checks it: a route the table does not name
 * makes the app fail to build. A need the token can never meet is refused before the body is
 * read; one that depends on the body (`publish`: `promote` unless `promote` is false) once it is
 * parsed and valid. The need is also written into the route's OpenAPI operation.
 */
export function requireCapabilities(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = (route.schema ?? {}) as { operationId?: string; description?: string; hide?: boolean; 'x-plinth-capability'?: string }
    const need = restNeed(schema.operationId, `${String(route.method)} ${route.url}`)
    route.config = { ...route.config, capability: need }
    if (schema.hide) return
    schema['x-plinth-capability'] = need
    const any = capabilitiesFor(need)
    if (any.length > 0 && !schema.description?.includes('Token capability:')) {
      const note = `Token capability: ${any.join(' or ')}${need === 'publish' ? ' (promote when the version goes live, preview when promote is false)' : ''}${need === 'create-site' ? ', with a token not limited to some sites' : ''}.`
      schema.description = schema.description ? `${schema.description}\n\n${note}` : note
    }
    route.schema = schema
  })
  const check = (request: FastifyRequest, input: unknown, done: (error?: Error) => void) => {
    const need = request.routeOptions.config.capability
    try {
      const principal = principalOf(request)
      if (need !== undefined && (input !== undefined || !mayEverCall(principal, need))) requireCapability(principal, need, input)
      done()
    } catch (error) {
      done(error as Error)
    }
  }
  app.addHook('onRequest', (request, _reply, done) => check(request, undefined, done))
  app.addHook('preHandler', (request, _reply, done) => check(request, request.body ?? {}, done))
}

/** The caller, for handlers behind authenticate(). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('AUTH_REQUIRED', REASONS.missing)
  return request.principal
}

/** RFC 9728 protected-resource metadata for the REST API and the MCP endpoint. */
export function registerResourceMetadata(app: FastifyInstance, config: Config): void {
  const document = (resource: string) => ({
    resource,
    resource_name: 'Plinth',
    // Plinth is its own authorization server (oauth/): MCP clients sign people in there.
    authorization_servers: [config.baseUrl],
    // The one scope a client asks for: `mcp`, every capability, which the person may narrow on the
    // consent page. The authorization server's own metadata also lists `plinth:{capability}`,
    // one each, for a client that asks for less (core/capabilities.ts).
    scopes_supported: [TOKEN_SCOPE],
    bearer_methods_supported: ['header'],
    resource_documentation: `${config.siteUrl}/docs`,
  })
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, () => document(config.baseUrl))
  app.get('/.well-known/oauth-protected-resource/mcp', { schema: { hide: true } }, () => document(`${config.baseUrl}/mcp`))
}
