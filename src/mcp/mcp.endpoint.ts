/**
 * The Streamable HTTP endpoint on web-standard Request/Response, stateless and answering in JSON
 * for every revision Plinth serves: 2026-07-28 through the SDK's per-request handler, and the
 * 2025 revisions (2025-06-18, 2025-11-25) through a fresh stateless transport per request. The
 * SDK's own 2025 fallback answers with SSE streams; an agent publishing a site wants one JSON
 * answer, so that leg is composed here with `enableJsonResponse`.
 */
import { type AuthInfo, createMcpHandler, isLegacyRequest, type McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import type { McpCaller } from './mcp.server.ts'
import { TOKEN_SCOPE } from '../core/enums.ts'

export interface McpEndpoint {
  /** Serves one POST; `parsedBody` is the JSON body when the caller already parsed it. */
  handle(request: Request, caller: McpCaller, parsedBody: unknown): Promise<Response>
  close(): Promise<void>
}

const authInfoOf = (caller: McpCaller): AuthInfo => ({
  token: caller.principal.tokenId,
  clientId: caller.principal.tokenId,
  scopes: [TOKEN_SCOPE],
  extra: { caller },
})

const callerIn = (authInfo: AuthInfo | undefined): McpCaller => {
  const caller = authInfo?.extra?.caller as McpCaller | undefined
  // The route authenticates before the endpoint runs; reaching here without one is a wiring bug.
  if (!caller) throw new Error('MCP request without an authenticated principal')
  return caller
}

export function createMcpEndpoint(
  serverFor: (caller: McpCaller) => McpServer,
  options: { maxRequestBodySize: number; onerror: (error: Error) => void },
): McpEndpoint {
  const { maxRequestBodySize, onerror } = options
  const modern = createMcpHandler(({ authInfo }) => serverFor(callerIn(authInfo)), {
    legacy: 'reject',
    responseMode: 'auto',
    maxRequestBodySize,
    onerror,
  })

  async function serveLegacy(request: Request, caller: McpCaller, parsedBody: unknown): Promise<Response> {
    const server = serverFor(caller)
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize })
    transport.onerror = onerror
    try {
      await server.connect(transport)
      return await transport.handleRequest(request, { authInfo: authInfoOf(caller), ...(parsedBody === undefined ? {} : { parsedBody }) })
    } finally {
      await server.close().catch(onerror)
    }
  }

  return {
    async handle(request, caller, parsedBody) {
      if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize })) return serveLegacy(request, caller, parsedBody)
      return modern.fetch(request, { authInfo: authInfoOf(caller), ...(parsedBody === undefined ? {} : { parsedBody }) })
    },
    close: () => modern.close(),
  }
}
