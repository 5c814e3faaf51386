/**
 * Toolsets over real HTTP, with the SDK's v2 and 1.x clients on every store: what a client gets
 * without choosing, `all`, choosing by the X-MCP-Toolsets header or the toolsets query parameter,
 * an unknown name refused with the REST envelope, and a tool outside the chosen sets neither
 * listed nor callable.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createSite, createUser, type TestUser } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const CONTENT_TOOLS = [
  'create_collection',
  'delete_entry',
  'get_collection',
  'get_entry',
  'list_collections',
  'list_entries',
  'put_entry',
  'update_collection',
  'upsert_entries',
]
const DEFAULT_TOOLS = [
  'create_upload',
  'delete_file',
  'delete_website',
  'diff_versions',
  'discard_draft',
  'edit_file',
  'get_job_status',
  'get_website',
  'list_files',
  'list_versions',
  'list_websites',
  'move_file',
  'promote_version',
  'publish_draft',
  'publish_version',
  'publish_website',
  'read_file',
  'set_site_password',
  'start_draft',
  'suggest_slug',
  'write_file',
]
const ALL_TOOLS = [
  ...DEFAULT_TOOLS,
  ...CONTENT_TOOLS,
  'import_asset',
  'list_forms',
  'list_form_submissions',
  'screenshot_page',
  'get_site_traffic',
  'request_promotion',
  'get_promotion_request',
  'withdraw_promotion_request',
  'schedule_promotion',
  'list_schedules',
  'cancel_schedule',
].sort()

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

const namesOf = async (client: McpClient) => (await client.listTools()).tools.map((t) => t.name).sort()

const sharedServer = sharedTestServers()
for (const store of STORES) {
  for (const kind of CLIENTS) {
    describe(`MCP toolsets (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
      let server: TestServer
      let user: TestUser
      const opened: McpClient[] = []
      const open = async (options: { toolsets?: string; toolsetsIn?: 'header' | 'query' } = {}) => {
        const client = await connect(server, user.token, { client: kind, ...options })
        opened.push(client)
        return client
      }

      before(async () => {
        server = await sharedServer(store.name)
        user = await createUser(server)
      })
      after(async () => {
        for (const client of opened) await client.close()
      })

      it('lists the publishing and draft tools to a client that chooses none, and says how to choose more', async () => {
        const client = await open()
        assert.deepEqual(await namesOf(client), [...DEFAULT_TOOLS].sort())
        const instructions = client.getInstructions() ?? ''
        assert.match(instructions, /start_draft/)
        assert.match(instructions, /content \(collections and their entries/)
        assert.match(instructions, /X-MCP-Toolsets/)
        assert.doesNotMatch(instructions, /upsert_entries/, 'no word of tools the client does not have')
      })

      it('lists every tool for all, in the header or in the query', async () => {
        assert.deepEqual(await namesOf(await open({ toolsets: 'all' })), ALL_TOOLS)
        const byQuery = await open({ toolsets: 'all', toolsetsIn: 'query' })
        assert.deepEqual(await namesOf(byQuery), ALL_TOOLS)
        assert.doesNotMatch(byQuery.getInstructions() ?? '', /did not choose/)
      })

      it('lists exactly the chosen toolsets, named in either place, in any case, repeated or not', async () => {
        const content = await open({ toolsets: ' Content ' })
        assert.deepEqual(await namesOf(content), CONTENT_TOOLS)
        // Field descriptions are given once per listing: here by the first content tool, not by a publishing tool left out.
        const [first] = (await content.listTools()).tools
        assert.equal(typeof first?.inputSchema.properties.websiteId.description, 'string')

        assert.deepEqual(await namesOf(await open({ toolsets: 'default,images', toolsetsIn: 'query' })), [...DEFAULT_TOOLS, 'import_asset'].sort())
        assert.deepEqual(await namesOf(await open({ toolsets: 'drafts,drafts,IMAGES' })), [
          'delete_file',
          'discard_draft',
          'edit_file',
          'import_asset',
          'list_files',
          'move_file',
          'publish_draft',
          'read_file',
          'start_draft',
          'write_file',
        ])
        // The header and the query parameter together: the sets of both.
        const both = await server.api('POST', '/mcp?toolsets=images', {
          token: user.token,
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
          headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25', 'x-mcp-toolsets': 'drafts' },
        })
        assert.equal(both.status, 200, both.text)
        assert.equal(both.body.result.tools.length, 10)
      })

      it('refuses an unknown toolset with VALIDATION_FAILED in the REST envelope, naming where it was given', async () => {
        const byHeader = await server.api('POST', '/mcp', { token: user.token, body: INIT, headers: { ...MCP_HEADERS, 'x-mcp-toolsets': 'default,billing' } })
        assert.equal(byHeader.status, 422, byHeader.text)
        assert.equal(byHeader.body.error.code, 'VALIDATION_FAILED')
        assert.match(
          byHeader.body.error.fields['X-MCP-Toolsets'],
          /"billing".*publishing, drafts, content, images, forms, traffic, browser, approvals, default, all/,
        )
        assert.match(byHeader.body.error.message, /Unknown toolset "billing"/)

        const byQuery = await server.api('POST', `/mcp?toolsets=${'x'.repeat(500)}`, { token: user.token, body: INIT, headers: MCP_HEADERS })
        assert.equal(byQuery.status, 422)
        assert.ok(byQuery.body.error.fields.toolsets.length < 200, 'the name is shortened')
        await assert.rejects(open({ toolsets: 'everything' }))
      })

      it('refuses a call to a tool outside the chosen toolsets, saying which toolset has it, and does nothing', async () => {
        const site = await createSite(server, { owner: user })
        const client = await open()
        const create = { websiteId: site.websiteId, name: 'posts', label: 'Posts', fields: [] }
        await assert.rejects(call(client, 'create_collection', create), /create_collection is in the content toolset.*toolsets=publishing,drafts,content/)
        const collections = await server.api('GET', `/v1/websites/${site.websiteId}/collections`, { token: user.token })
        assert.equal(collections.status, 200)
        assert.deepEqual(collections.body.items, [], 'no collection was made')

        const contentOnly = await open({ toolsets: 'content' })
        await assert.rejects(call(contentOnly, 'list_websites'), /list_websites is in the publishing toolset/)
        const made = await call(contentOnly, 'create_collection', create)
        assert.equal(made.isError, false, JSON.stringify(made.data))
      })
    })
  }
}
