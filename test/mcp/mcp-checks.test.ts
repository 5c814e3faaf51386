/**
 * The MCP server's own checks, on tools made for them and the SDK's v2 Client over an in-memory
 * transport: arguments are checked as REST checks a body (VALIDATION_FAILED naming the field), a
 * result that breaks its tool's output schema never reaches the client as a result, and both
 * checks hold on a tool's first call as on later ones (they are compiled on first use).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/client'
import { InMemoryTransport } from '@modelcontextprotocol/server'
import { Type } from 'typebox'
import type { Principal } from '../../src/core/principal.ts'
import { createMcpServerFactory } from '../../src/mcp/mcp.server.ts'
import { type AnyMcpTool, READ_ONLY, toolArgs } from '../../src/mcp/tool-definition.ts'

const principal: Principal = { userId: 'usr_1', email: 'a@example.com', name: null, tokenId: 'tok_1', access: 'both', capabilities: null, sites: null }
const Counted = Type.Object({ count: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })

/** Two tools with the names (and so the capability needs) of real ones: one keeps its promise, one breaks its output schema. */
const tools: AnyMcpTool[] = [
  {
    name: 'list_websites',
    toolset: 'publishing',
    title: 'Count',
    description: 'Counts.',
    input: toolArgs({ upTo: Type.Integer({ minimum: 1, maximum: 10 }) }),
    output: Counted,
    hints: READ_ONLY,
    run: (_principal, input: { upTo: number }) => Promise.resolve({ count: input.upTo }),
  },
  {
    name: 'get_website',
    toolset: 'publishing',
    title: 'Miscount',
    description: 'Miscounts.',
    input: toolArgs({}),
    output: Counted,
    hints: READ_ONLY,
    run: () => Promise.resolve({ count: 'many' }),
  },
]

async function connected(): Promise<Client> {
  const serverFor = createMcpServerFactory({ tools, registry: new Map(), version: '1.0.0', logError: () => {}, siteUrls: 'http://{slug}.localhost/' })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await serverFor({ principal, toolsets: ['publishing'] }).connect(serverSide)
  const client = new Client({ name: 'checks', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

describe("the MCP server's argument and result checks", () => {
  test('bad arguments are VALIDATION_FAILED naming the field, on the first call and after a good one', async () => {
    const client = await connected()
    try {
      for (const args of [{ upTo: 11 }, { upTo: 3 }, { upTo: 'three' }, { upTo: 2, extra: true }]) {
        const result = await client.callTool({ name: 'list_websites', arguments: args })
        if (args.upTo === 3) {
          assert.deepEqual(result.structuredContent, { count: 3 })
          continue
        }
        assert.equal(result.isError, true, JSON.stringify(args))
        const text = (result.content as Array<{ text: string }>)[0]!.text
        assert.equal(JSON.parse(text).error.code, 'VALIDATION_FAILED', text)
        assert.match(text, /upTo|extra/)
      }
    } finally {
      await client.close()
    }
  })

  test('a result that breaks its output schema is not answered as a result, each time', async () => {
    const client = await connected()
    try {
      for (let i = 0; i < 2; i++) {
        const answer = await client.callTool({ name: 'get_website', arguments: {} }).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        )
        if ('result' in answer) {
          assert.equal(answer.result.isError, true, JSON.stringify(answer.result))
          assert.notDeepEqual(answer.result.structuredContent, { count: 'many' })
        } else assert.match(String(answer.error), /output|schema|count/i)
      }
    } finally {
      await client.close()
    }
  })
})
