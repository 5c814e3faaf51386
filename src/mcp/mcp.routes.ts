/**
 * `{base_url}/mcp`: the MCP endpoint (Streamable HTTP, JSON-RPC 2.0 over POST, stateless) inside
 * the Fastify app, so the body limit, the auth hook and the error envelope for faults outside
 * the protocol (401, 403, 413) are the REST API's own. JSON-RPC errors are kept for protocol
 * faults. A browser's GET gets the web site's token page instead (decisions.md).
 */
import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { authenticate, principalOf } from '../auth/auth.routes.ts'
import type { TokensService } from '../auth/tokens.service.ts'
import type { Config } from '../config.ts'
import { quoted } from '../core/text.ts'
import { schemaRegistry } from './json-schema.ts'
import type { McpEndpoint } from './mcp.endpoint.ts'
import { preferredMediaType } from '../http/negotiation.ts'
import { checkOrigin } from '../http/origins.ts'
import type { AnyMcpTool } from './tool-definition.ts'
import { chosenToolsets, defaultToolsetsFor, TOOLSETS_HEADER, TOOLSETS_QUERY, type ToolsetName } from './toolsets.ts'
import { siteUrlPattern } from '../core/site-address.ts'

export interface McpRoutesOptions {
  config: Config
  tokens: TokensService
  tools: AnyMcpTool[]
  version: string
  bodyLimit: number
  /** What a browser's GET of /mcp gets: the web site's token page. */
  tokenPage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>
}

/** JSON-RPC error code for transport-level refusals (the SDK's own choice for the same cases). */
const TRANSPORT_ERROR = -32000
const PARSE_ERROR = -32700
const INVALID_PARAMS = -32602
const STATELESS =
  'This MCP endpoint is stateless: send every JSON-RPC message as a POST. It opens no standalone SSE stream (GET) and has no session to end (DELETE).'

export function mcpRoutes({ config, tokens, tools, version, bodyLimit, tokenPage }: McpRoutesOptions): FastifyPluginAsync {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    const registry = schemaRegistry(Object.values(app.getSchemas()))
    /**
     * The MCP SDK, the server and the tools' compiled schemas are made on the first request that
     * reaches them, not at start: they are a large part of a start's time, and many instances
     * serve no MCP client for a long while. A failed making is tried again on the next request.
     */
    let loading: Promise<McpEndpoint> | null = null
    const endpoint = () =>
      (loading ??= (async () => {
        const [{ createMcpEndpoint }, { createMcpServerFactory }] = await Promise.all([import('./mcp.endpoint.ts'), import('./mcp.server.ts')])
        const serverFor = createMcpServerFactory({
          tools,
          registry,
          version,
          logError: (err, message) => app.log.error({ err }, message),
          siteUrls: siteUrlPattern(config),
        })
        return createMcpEndpoint(serverFor, {
          maxRequestBodySize: bodyLimit,
          // Refused protocol requests are answered to the client; the log only needs them when debugging.
          onerror: (err) => app.log.debug({ err }, 'MCP request refused'),
        })
      })().catch((error: unknown) => {
        loading = null
        throw error
      }))
    app.addHook('onClose', async () => {
      // A failed making was answered to the request that started it, and left nothing to close.
      const made = await loading?.catch(() => null)
      await made?.close()
    })

    const requireToken = authenticate(config, tokens, 'mcp')
    app.addHook(
      'onRequest',
      checkOrigin(config, { refusal: "Requests from web pages are accepted only from Plinth's own origin. MCP clients send no Origin header." }),
    )

    // The SDK checks the media type itself (415 as a JSON-RPC error); this scope only reads bytes.
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    const parseJson = jsonParser(app)

    app.post('/mcp', { onRequest: requireToken, schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(request)
      const toolsets = chosenToolsets(
        request.headers[TOOLSETS_HEADER],
        (request.query as Record<string, unknown>)[TOOLSETS_QUERY],
        defaultToolsetsFor(principal.capabilities),
      )
      const raw = Buffer.isBuffer(request.body) ? request.body : undefined
      let parsedBody: unknown
      if (raw !== undefined && raw.length > 0 && isJsonRequest(request)) {
        parsedBody = isUtf8(raw) ? await parseJson(request, raw) : undefined
        if (parsedBody === undefined)
          return sendResponse(
            reply,
            jsonRpcError(400, PARSE_ERROR, 'Parse error: the body is not valid JSON in UTF-8 (or carries __proto__ or constructor keys).'),
          )
      }
      const refused = refusedToolCall(parsedBody, tools, toolsets)
      if (refused) return sendResponse(reply, refused)
      const caller = { principal, toolsets, calling: toolCalled(parsedBody) }
      const response = await (await endpoint()).handle(toWebRequest(config, request, reply, raw), caller, parsedBody)
      return sendResponse(reply, response)
    })

    app.get('/mcp', { schema: { hide: true } }, async (request, reply) => {
      reply.header('Vary', 'Accept')
      if (prefersPage(request.headers.accept)) return tokenPage(request, reply)
      await requireToken(request)
      return sendResponse(reply, jsonRpcError(405, TRANSPORT_ERROR, STATELESS, { Allow: 'POST' }))
    })

    app.delete('/mcp', { onRequest: requireToken, schema: { hide: true } }, async (_request, reply) =>
      sendResponse(reply, jsonRpcError(405, TRANSPORT_ERROR, STATELESS, { Allow: 'POST' })),
    )
  }
}

/** No tool name is longer; a longer one is answered here, so that the SDK does not echo it in full. */
const TOOL_NAME_MAX = 64

/**
 * A tools/call this connection may not make, answered like the SDK's -32602 for an unknown tool:
 * one of a toolset the connection did not choose (the message says how to choose it), or a name
 * too long to be any tool's (shortened, where the SDK would echo it in full).
 */
function refusedToolCall(body: unknown, tools: AnyMcpTool[], toolsets: readonly ToolsetName[]): Response | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: { name?: unknown } }
  const name = params?.name
  if (method !== 'tools/call' || typeof name !== 'string') return undefined
  const tool = tools.find((t) => t.name === name)
  let message: string
  if (tool && !toolsets.includes(tool.toolset)) {
    const wanted = [...toolsets, tool.toolset].join(',')
    message = `Tool ${name} is in the ${tool.toolset} toolset, which this connection did not choose (it has ${toolsets.join(', ')}). Connect with the header X-MCP-Toolsets: ${wanted}, or with ?toolsets=${wanted} on the MCP URL.`
  } else if (!tool && name.length > TOOL_NAME_MAX) message = `Tool ${quoted(name, 80)} not found`
  else return undefined
  const error = { code: INVALID_PARAMS, message }
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  })
}

/** The tool a tools/call request names, if it is one. */
function toolCalled(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } }
  return method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined
}

/** A browser navigating to /mcp prefers text/html; an MCP client asks for text/event-stream or JSON. */
function prefersPage(accept: string | undefined): boolean {
  return preferredMediaType(accept, ['text/event-stream', 'application/json', 'text/html']) === 'text/html'
}

function isJsonRequest(request: FastifyRequest): boolean {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || type.endsWith('+json')
}

/** Fastify's own JSON parser (prototype-poisoning keys refused), resolving to undefined on any fault. */
function jsonParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error')
  return (request: FastifyRequest, raw: Buffer) =>
    new Promise<unknown>((resolve) => {
      // parse() is synchronous but typed with a callback; `this` is unused by the default parser.
      parse.call(app, request, raw.toString('utf8'), (error, body) => resolve(error ? undefined : body))
    })
}

function toWebRequest(config: Config, request: FastifyRequest, reply: FastifyReply, raw: Buffer | undefined): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  // Lets the SDK stop work for a client that went away before its answer.
  const aborted = new AbortController()
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) aborted.abort()
  })
  return new Request(new URL(request.url, config.baseUrl), {
    method: request.method,
    headers,
    signal: aborted.signal,
    ...(raw && raw.length > 0 ? { body: raw, duplex: 'half' } : {}),
  } as RequestInit)
}

async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status)
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value)
  })
  const body = Buffer.from(await response.arrayBuffer())
  return reply.send(body.length > 0 ? body : undefined)
}

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}
