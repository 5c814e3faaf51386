/**
 * The Streamable HTTP endpoint on web-standard Request/Response, stateless and answering in JSON
 * for every revision Plinth serves: 2026-07-28 through the SDK's per-request handler, and the
 * 2025 revisions (2025-06-18, 2025-11-25) through a fresh stateless transport per request. The
 * SDK's own 2025 fallback answers with SSE streams; an agent publishing a site wants one JSON
 * answer, so that leg is composed here with `enableJsonResponse`.
 */
import { type AuthInfo, createMcpHandler, isLegacyRequest, type McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import type { Principal } from '../core/principal.ts'
import { TOKEN_SCOPE } from '../core/enums.ts'

export interface McpEndpoint {
  /** Serves one POST; `parsedBody` is the JSON body when the caller already parsed it. */
  handle(request: Request, principal: Principal, parsedBody: unknown): Promise<Response>
  close(): Promise<void>
}

const authInfoOf = (principal: Principal): AuthInfo => ({
  token: principal.tokenId,
  clientId: principal.tokenId,
  scopes: [TOKEN_SCOPE],
  extra: { principal },
})

const principalIn = (authInfo: AuthInfo | undefined): Principal => {
  const principal = authInfo?.extra?.principal as Principal | undefined
  // The route authenticates before the endpoint runs; reaching here without one is a wiring bug.
  if (!principal) throw new Error('MCP request without an authenticated principal')
  return principal
}

export function createMcpEndpoint(
  serverFor: (principal: Principal) => McpServer,
  options: { maxRequestBodySize: number; onerror: (error: Error) => void },
): McpEndpoint {
  const { maxRequestBodySize, onerror } = options
  const modern = createMcpHandler(({ authInfo }) => serverFor(principalIn(authInfo)), {
    legacy: 'reject',
    responseMode: 'auto',
    maxRequestBodySize,
    onerror,
  })

  async function serveLegacy(request: Request, principal: Principal, parsedBody: unknown): Promise<Response> {
    const server = serverFor(principal)
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize })
    transport.onerror = onerror
    try {
      await server.connect(transport)
      return await transport.handleRequest(request, { authInfo: authInfoOf(principal), ...(parsedBody === undefined ? {} : { parsedBody }) })
    } finally {
      await server.close().catch(onerror)
    }
  }

  return {
    async handle(request, principal, parsedBody) {
      if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize })) return serveLegacy(request, principal, parsedBody)
      return modern.fetch(request, { authInfo: authInfoOf(principal), ...(parsedBody === undefined ? {} : { parsedBody }) })
    },
    close: () => modern.close(),
  }
}
