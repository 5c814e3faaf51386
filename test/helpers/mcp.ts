/**
 * MCP clients over real HTTP, for the MCP suites: the SDK's v2 Client at every revision Plinth
 * serves, and the SDK 1.x Client that most installed agents and MCP Inspector still run. Both
 * check every structured result against the tool's outputSchema.
 */
import assert from 'node:assert/strict'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as Sdk1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Sdk1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { TestServer } from './server.ts'

export const REVISIONS = ['2025-06-18', '2025-11-25', '2026-07-28'] as const
export type Revision = (typeof REVISIONS)[number]

/** `v2`: @modelcontextprotocol/client; `sdk1`: @modelcontextprotocol/sdk 1.x (revision 2025-11-25). */
export const CLIENTS = ['v2', 'sdk1'] as const
export type ClientKind = (typeof CLIENTS)[number]

export interface ListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: Record<string, any>
  outputSchema?: Record<string, any>
  annotations?: Record<string, any>
}

export interface ToolResult {
  content?: unknown
  structuredContent?: unknown
  isError?: boolean
}

/** What the suites use of a client; both SDKs' clients have exactly these methods. */
export interface McpClient {
  readonly kind: ClientKind
  listTools(): Promise<{ tools: ListedTool[] }>
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<ToolResult>
  getServerVersion(): { name: string; version: string } | undefined
  getServerCapabilities(): Record<string, any> | undefined
  getInstructions(): string | undefined
  close(): Promise<void>
}

export interface ConnectOptions {
  client?: ClientKind
  /** v2 only: the revision to speak (SDK 1.x negotiates its latest, 2025-11-25). */
  revision?: Revision
  /** The toolsets to choose (`content`, `default,images`, `all`...); none: the default ones. */
  toolsets?: string
  /** Where the toolsets are named: the X-MCP-Toolsets header (the default) or the toolsets query parameter. */
  toolsetsIn?: 'header' | 'query'
}

export async function connect(
  server: TestServer,
  token: string,
  { client = 'v2', revision = '2026-07-28', toolsets, toolsetsIn = 'header' }: ConnectOptions = {},
): Promise<McpClient> {
  const url = new URL(`${server.url}/mcp`)
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (toolsets !== undefined && toolsetsIn === 'query') url.searchParams.set('toolsets', toolsets)
  if (toolsets !== undefined && toolsetsIn === 'header') headers['x-mcp-toolsets'] = toolsets
  const requestInit = { headers }
  if (client === 'sdk1') {
    const sdk1 = new Sdk1Client({ name: 'plinth-test-sdk1', version: '1.0.0' })
    await sdk1.connect(new Sdk1Transport(url, { requestInit }))
    return adapt('sdk1', sdk1)
  }
  const options = revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: revision } } } : { supportedProtocolVersions: [revision] }
  const v2 = new Client({ name: 'plinth-test', version: '1.0.0' }, options)
  await v2.connect(new StreamableHTTPClientTransport(url, { requestInit }))
  return adapt('v2', v2)
}

type AnyClient = Client | Sdk1Client

function adapt(kind: ClientKind, client: AnyClient): McpClient {
  return {
    kind,
    listTools: async () => await client.listTools(),
    callTool: async (params) => (await client.callTool(params)) as ToolResult,
    getServerVersion: () => client.getServerVersion(),
    getServerCapabilities: () => client.getServerCapabilities() as Record<string, any> | undefined,
    getInstructions: () => client.getInstructions(),
    close: () => client.close(),
  }
}

/**
 * Calls a tool and reads its result as an agent does. A success carries the result as
 * structuredContent and the same JSON as text; an error result carries the error envelope as its
 * JSON text and no structuredContent (it would not match the tool's outputSchema).
 */
export async function call(client: McpClient, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args })
  const [item, ...others] = result.content as Array<{ type: string; text: string }>
  assert.ok(item !== undefined && others.length === 0, `${name}: one content item`)
  assert.equal(item.type, 'text')
  const text = JSON.parse(item.text)
  if (result.isError === true) {
    assert.equal(result.structuredContent, undefined, `${name}: an error result has no structuredContent`)
    assert.equal(typeof text.error?.code, 'string', `${name}: the text is the error envelope`)
    return { isError: true, data: text }
  }
  assert.deepEqual(text, result.structuredContent)
  return { isError: false, data: result.structuredContent as any }
}
