/**
 * The MCP server: every module's tools on one McpServer per request (the endpoint is stateless),
 * each tool bound to the caller's Principal. Schemas are prepared once, when the first MCP request
 * makes the server (mcp.routes.ts): inlined into self-contained JSON Schemas and compiled, so a
 * request only pays for its own call.
 */
import {
  type CallToolResult,
  fromJsonSchema,
  type jsonSchemaValidator,
  McpServer,
  type StandardSchemaWithJSON,
  type ToolAnnotations,
} from '@modelcontextprotocol/server'
import { Ajv, addFormats } from '@modelcontextprotocol/server/validators/ajv'
import type { Principal } from '../core/principal.ts'
import { AppError } from '../core/errors.ts'
import { mergeClientOnlyConstraints } from '../core/schemas.ts'
import { validationError } from '../http/errors.http.ts'
import { resultShape, type SchemaRegistry, selfContained, withoutRepeatedDescriptions } from './json-schema.ts'
import type { AnyMcpTool } from './tool-definition.ts'

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

const instructions = (
  siteUrls: string,
) => `Plinth hosts static websites. You write the whole site (HTML, CSS, JS, images) and publish it as one bundle of files; Plinth checks it against its authoring rules (publish_website lists them), stores it as a numbered version and serves it at once at ${siteUrls}.
- New site: suggest_slug (optional), then publish_website. Change a site: publish_version with baseVersion and changes (put, delete, move, edit: a patch of the files), or with the complete new bundle, where files you do not change can be passed by sha256 instead of content. diff_versions shows what changed between two versions.
- Review before going live: publish_version with promote false, open its previewUrl, then promote_version. promote_version also rolls back to any older version.
- Find your sites with list_websites; inspect one with get_website or list_versions (versions come in pages, newest first: pass nextCursor as cursor for older ones).
- Large binaries: create_upload, PUT the bytes to uploadUrl, then publish { path, uploadId } or import_asset { uploadId }.
- Collection content (posts, products...): list_collections, get_collection (its fields say what entry data holds), create_collection, update_collection; entries with upsert_entries, put_entry, list_entries, get_entry, delete_entry. Entries are served on the live site at /{collection}-{slug} as soon as they are written.
- Every error result has isError true and its text is JSON {"error": {code, message, fields?, violations?, retryAfter?}}: VALIDATION_FAILED names each bad argument in fields; PUBLISH_INVALID lists every broken rule in violations (code, message, path), so fix them all before retrying; RATE_LIMITED gives retryAfter in seconds; NOT_FOUND also covers sites you may not see.`

/** The SDK checks arguments before the tool runs; Plinth checks them itself to answer exactly like REST. */
const ARGUMENTS_CHECKED_BY_TOOL: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
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
  config: {
    title: string
    description: string
    inputSchema: StandardSchemaWithJSON<unknown, unknown>
    outputSchema: StandardSchemaWithJSON<unknown, unknown>
    annotations: ToolAnnotations
  }
  check: ReturnType<ReturnType<typeof createInputValidator>['compile']>
}

function prepare(tools: AnyMcpTool[], registry: SchemaRegistry): PreparedTool[] {
  const ajv = createInputValidator()
  const names = new Set<string>()
  const describedFields = new Set<string>()
  return tools.map((tool) => {
    if (names.has(tool.name)) throw new Error(`Two MCP tools are named ${tool.name}`)
    names.add(tool.name)
    // Arguments are checked against the schema as validated; clients are shown what it states.
    const input = selfContained(tool.input, registry)
    const output = resultShape(mergeClientOnlyConstraints(selfContained(tool.output, registry)))
    if (input.type !== 'object' || output.type !== 'object') throw new Error(`MCP tool ${tool.name}: input and output schemas must be objects`)
    return {
      tool,
      check: ajv.compile(input),
      config: {
        title: tool.title,
        description: tool.description,
        // The tool list is read by agents at every connection: each field description is given once.
        inputSchema: fromJsonSchema(withoutRepeatedDescriptions(mergeClientOnlyConstraints(input), describedFields), ARGUMENTS_CHECKED_BY_TOOL),
        // Checked by the SDK before sending: a result that breaks its schema is our bug, not the caller's.
        outputSchema: fromJsonSchema(output),
        // The title is the tool's own (clients prefer it to annotations.title): said once.
        annotations: { ...tool.hints },
      },
    }
  })
}

/** A success: the result as structuredContent and, for clients that read text only, as JSON text. */
function toolResult(value: object): CallToolResult {
  return { structuredContent: value, content: [{ type: 'text', text: JSON.stringify(value) }] }
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
export function createMcpServerFactory({ tools, registry, version, logError, siteUrls }: McpServerDeps): (principal: Principal) => McpServer {
  const prepared = prepare(tools, registry)

  const call = async ({ tool, check }: PreparedTool, principal: Principal, args: unknown): Promise<CallToolResult> => {
    try {
      const input = args ?? {}
      if (!check(input)) throw validationError(check.errors ?? [])
      return toolResult((await tool.run(principal, input)) as object)
    } catch (error) {
      if (error instanceof AppError) return toolError(error)
      logError(error, `MCP tool ${tool.name} failed`)
      return toolError(new AppError('INTERNAL', 'Something went wrong on our side. The error was logged; retry later.'))
    }
  }

  return (principal) => {
    const server = new McpServer(
      { name: 'plinth', title: 'Plinth', version, description: 'Publish static websites as JSON bundles and serve them at once.' },
      { instructions: instructions(siteUrls) },
    )
    for (const entry of prepared) server.registerTool(entry.tool.name, entry.config, (args: unknown) => call(entry, principal, args))
    // registerTool advertises tools.listChanged; Plinth's tool list never changes while a client is
    // connected and no such notification is ever sent, so the capability is withdrawn (undefined
    // is left out of the JSON answer).
    server.server.registerCapabilities({ tools: { listChanged: undefined } })
    return server
  }
}
