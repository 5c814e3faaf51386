/**
 * The MCP server: the tools of the toolsets a caller chose on one McpServer per request (the
 * endpoint is stateless), each tool bound to the caller's Principal. Schemas are prepared once,
 * when the first MCP request makes the server (mcp.routes.ts): inlined into self-contained JSON
 * Schemas, and each choice of toolsets gets its listing once, so a request only pays for its own
 * call. A tool's argument and result checks are compiled on its first call (most tools of an
 * instance are not called for a long time after it starts, and compiling all of them is most of
 * the first request's CPU).
 */
import {
  type CallToolResult,
  fromJsonSchema,
  type jsonSchemaValidator,
  McpServer,
  type StandardSchemaWithJSON,
  type ToolAnnotations,
} from '@modelcontextprotocol/server'
import { Ajv, AjvJsonSchemaValidator, addFormats } from '@modelcontextprotocol/server/validators/ajv'
import type { Principal } from '../core/principal.ts'
import { type CapabilityNeed, mayEverCall, requireCapability } from '../core/capabilities.ts'
import { toolNeed } from '../core/capability-map.ts'
import { AppError } from '../core/errors.ts'
import { nulFieldRefusal } from '../core/nul-characters.ts'
import { mergeClientOnlyConstraints } from '../core/schemas.ts'
import { validationError } from '../http/errors.http.ts'
import { resultShape, type SchemaRegistry, selfContained, withoutRepeatedDescriptions } from './json-schema.ts'
import { instructions } from './instructions.ts'
import { type AnyMcpTool, type ToolImage, WithImages } from './tool-definition.ts'
import type { ToolsetName } from './toolsets.ts'

export interface McpServerDeps {
  tools: AnyMcpTool[]
  /** Every named schema the tools' schemas may point at. */
  registry: SchemaRegistry
  version: string
  /** Where internal faults are logged (they reach the caller only as INTERNAL). */
  logError: (error: unknown, message: string) => void
  /** How this instance's site URLs look (`http://{slug}.localhost:8080/`), for the instructions. */
  siteUrls: string
}

/** Who calls, and which toolsets they chose (toolsets.ts). */
export interface McpCaller {
  principal: Principal
  toolsets: readonly ToolsetName[]
  /** The tool a tools/call request names: registered even when the token may not call it, so that the call is answered with TOKEN_NOT_ALLOWED. */
  calling?: string
}

/** The SDK checks arguments before the tool runs; Plinth checks them itself to answer exactly like REST. */
const ARGUMENTS_CHECKED_BY_TOOL: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
}

/** The SDK's own result check (Ajv, JSON Schema 2020-12). */
const sdkResultValidator = new AjvJsonSchemaValidator()
/** sdkResultValidator, each schema compiled when a result is first checked against it. */
const RESULTS_CHECKED_ON_FIRST_USE: jsonSchemaValidator = {
  getValidator: <T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]) => {
    let check: ReturnType<typeof sdkResultValidator.getValidator<T>> | undefined
    return (input: unknown) => (check ??= sdkResultValidator.getValidator<T>(schema))(input)
  },
}

/**
 * ajv-formats' plugin, from the SDK's copy of Ajv. The SDK declares it as `typeof formatsPlugin.default`,
 * a property its bundled declarations lack, so it reads as `any`; this is the plugin's shape.
 */
const addAjvFormats = addFormats as (ajv: InstanceType<typeof Ajv>) => InstanceType<typeof Ajv>

/** The options Fastify validates REST requests with: every error, no coercion, no silent stripping, unions told apart by their discriminator. */
function createInputValidator() {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: true, discriminator: true, strict: false })
  addAjvFormats(ajv)
  return ajv
}

interface PreparedTool {
  tool: AnyMcpTool
  /** What it needs of a token (core/capability-map.ts). */
  need: CapabilityNeed
  /** The input schema as clients are shown it, before repeated descriptions are left out. */
  shownInput: Record<string, unknown>
  outputSchema: StandardSchemaWithJSON<unknown, unknown>
  /** The arguments' check, compiled on the tool's first call. */
  check: () => ReturnType<ReturnType<typeof createInputValidator>['compile']>
}

/** The tools one choice of toolsets lists, each with its registration, and the instructions it gets. */
interface Listing {
  /** `listed`: the token may call it (core/capabilities.ts); a tool it may not is neither listed nor run. */
  tools: Array<{ prepared: PreparedTool; config: ToolConfig; listed: boolean }>
  instructions: string
}

interface ToolConfig {
  title: string
  description: string
  inputSchema: StandardSchemaWithJSON<unknown, unknown>
  outputSchema: StandardSchemaWithJSON<unknown, unknown>
  annotations: ToolAnnotations
}

function prepare(tools: AnyMcpTool[], registry: SchemaRegistry): PreparedTool[] {
  const ajv = createInputValidator()
  const names = new Set<string>()
  return tools.map((tool) => {
    if (names.has(tool.name)) throw new Error(`Two MCP tools are named ${tool.name}`)
    names.add(tool.name)
    // Arguments are checked against the schema as validated; clients are shown what it states.
    const input = selfContained(tool.input, registry)
    const output = resultShape(mergeClientOnlyConstraints(selfContained(tool.output, registry, { shareRepeated: true })))
    if (input.type !== 'object' || output.type !== 'object') throw new Error(`MCP tool ${tool.name}: input and output schemas must be objects`)
    let compiled: ReturnType<typeof ajv.compile> | undefined
    return {
      tool,
      need: toolNeed(tool.name),
      check: () => (compiled ??= ajv.compile(input)),
      shownInput: mergeClientOnlyConstraints(input),
      // Checked by the SDK before sending: a result that breaks its schema is our bug, not the caller's.
      outputSchema: fromJsonSchema(output, RESULTS_CHECKED_ON_FIRST_USE),
    }
  })
}

/** The listing of the tools of `toolsets` the caller's token may call, in the order the modules gave them. */
function listing(prepared: PreparedTool[], toolsets: readonly ToolsetName[], principal: Principal, siteUrls: string): Listing {
  // The tool list is read by agents at every connection: each field description is given once, by the first listed tool that has it.
  const describedFields = new Set<string>()
  return {
    instructions: instructions(siteUrls, toolsets),
    tools: prepared
      .filter(({ tool }) => toolsets.includes(tool.toolset))
      .map((entry) => ({
        prepared: entry,
        listed: mayEverCall(principal, entry.need),
        config: {
          title: entry.tool.title,
          description: entry.tool.description,
          inputSchema: fromJsonSchema(withoutRepeatedDescriptions(entry.shownInput, describedFields), ARGUMENTS_CHECKED_BY_TOOL),
          outputSchema: entry.outputSchema,
          // The title is the tool's own (clients prefer it to annotations.title): said once.
          annotations: { ...entry.tool.hints },
        },
      })),
  }
}

/** A success: the result as structuredContent and, for clients that read text only, as JSON text, after the images it shows. */
function toolResult(value: object, images: readonly ToolImage[] = []): CallToolResult {
  return {
    structuredContent: value,
    content: [
      ...images.map((image) => ({ type: 'image' as const, data: image.data.toString('base64'), mimeType: image.mimeType })),
      { type: 'text', text: JSON.stringify(value) },
    ],
  }
}

/**
 * A business error: the REST envelope as an isError result, so an agent reads the same code,
 * message, fields and violations as a REST client. RATE_LIMITED also says when to retry, in
 * seconds (REST sends it as Retry-After). The envelope is the text alone: structuredContent must
 * match the tool's outputSchema, and clients that check it (SDK 1.x, MCP Inspector) would turn
 * an error envelope there into a protocol error the agent never reads.
 */
function toolError(error: AppError): CallToolResult {
  const envelope: { error: Record<string, unknown> } = error.toEnvelope()
  if (error.retryAfterSeconds !== undefined) envelope.error.retryAfter = error.retryAfterSeconds
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }] }
}

/** Builds the per-request server factory: schemas are inlined and compiled here, once. */
export function createMcpServerFactory({ tools, registry, version, logError, siteUrls }: McpServerDeps): (caller: McpCaller) => McpServer {
  const prepared = prepare(tools, registry)
  // One listing per choice of toolsets, made when first asked for: there are few choices.
  const listings = new Map<string, Listing>()
  // Keyed by what decides a listing: the toolsets, and the token's capabilities and whether it is limited to sites.
  const listingFor = (toolsets: readonly ToolsetName[], principal: Principal): Listing => {
    const key = `${toolsets.join(',')}|${principal.capabilities?.join(',') ?? '*'}|${principal.sites === null ? '*' : 'sites'}`
    let found = listings.get(key)
    if (!found) listings.set(key, (found = listing(prepared, toolsets, principal, siteUrls)))
    return found
  }

  const call = async ({ tool, check, need }: PreparedTool, principal: Principal, args: unknown): Promise<CallToolResult> => {
    try {
      const input = args ?? {}
      const checkArguments = check()
      if (!checkArguments(input)) throw validationError(checkArguments.errors ?? [])
      const nulRefusal = nulFieldRefusal(input, 'arguments')
      if (nulRefusal) throw nulRefusal
      requireCapability(principal, need, input)
      const result: unknown = await tool.run(principal, input)
      return result instanceof WithImages ? toolResult(result.value as object, result.images) : toolResult(result as object)
    } catch (error) {
      if (error instanceof AppError) return toolError(error)
      logError(error, `MCP tool ${tool.name} failed`)
      return toolError(new AppError('INTERNAL', 'Something went wrong on our side. The error was logged; retry later.'))
    }
  }

  return ({ principal, toolsets, calling }) => {
    const chosen = listingFor(toolsets, principal)
    const server = new McpServer(
      { name: 'plinth', title: 'Plinth', version, description: 'Publish static websites as JSON bundles and serve them at once.' },
      { instructions: chosen.instructions },
    )
    for (const { prepared: entry, config, listed } of chosen.tools) {
      // The server answers one request: a tool the token may not call is there only when this request calls it, and then refuses.
      if (listed || entry.tool.name === calling) server.registerTool(entry.tool.name, config, (args: unknown) => call(entry, principal, args))
    }
    // registerTool advertises tools.listChanged; Plinth's tool list never changes while a client is
    // connected and no such notification is ever sent, so the capability is withdrawn (undefined
    // is left out of the JSON answer).
    server.server.registerCapabilities({ tools: { listChanged: undefined } })
    return server
  }
}
