import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'
import { type Surface, TOKEN_SCOPE } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { HttpError } from '../http/errors.http.ts'
import type { Principal } from '../core/principal.ts'
import { type TokensService, tokenReaches } from './tokens.service.ts'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
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
    scopes_supported: [TOKEN_SCOPE],
    bearer_methods_supported: ['header'],
    resource_documentation: `${config.siteUrl}/docs`,
  })
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, () => document(config.baseUrl))
  app.get('/.well-known/oauth-protected-resource/mcp', { schema: { hide: true } }, () => document(`${config.baseUrl}/mcp`))
}
