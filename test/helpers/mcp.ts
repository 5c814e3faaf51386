/** The SDK's own MCP Client over real HTTP, for the MCP suites. */
import assert from 'node:assert/strict'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { TestServer } from './server.ts'

export const REVISIONS = ['2025-06-18', '2025-11-25', '2026-07-28'] as const
export type Revision = (typeof REVISIONS)[number]

export async function connect(server: TestServer, token: string, revision: Revision = '2026-07-28'): Promise<Client> {
  const options = revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: revision } } } : { supportedProtocolVersions: [revision] }
  const client = new Client({ name: 'plinth-test', version: '1.0.0' }, options)
  const url = new URL(`${server.url}/mcp`)
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

/** Calls a tool; checks that the text content is the same JSON as structuredContent. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as Array<{ type: string; text: string }>
  assert.equal(content.length, 1)
  assert.equal(content[0].type, 'text')
  assert.deepEqual(JSON.parse(content[0].text), result.structuredContent)
  return { isError: result.isError === true, data: result.structuredContent as any }
}
