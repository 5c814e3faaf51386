/**
 * Tokens limited to capabilities and sites, over MCP with the SDK's v2 and 1.x clients on every
 * store: tools/list shows a token only the tools it may call, a call allowed by the token works,
 * one beyond it is an isError result with the REST envelope (403's TOKEN_NOT_ALLOWED, naming the
 * capability), a call whose need depends on its arguments (publish_version's promote) is judged
 * on them, and a site outside the token is NOT_FOUND as for a stranger.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TOOL_CAPABILITIES } from '../../src/core/capability-map.ts'
import { createSite, createToken, createUser, type TestUser } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { bundle, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const sharedServer = sharedTestServers()

/** The tools whose need is one of these, as the capability table says. */
const toolsNeeding = (...needs: string[]) =>
  Object.entries(TOOL_CAPABILITIES)
    .filter(([, need]) => needs.includes(need))
    .map(([name]) => name)
    .sort()

const namesOf = async (client: McpClient) => (await client.listTools()).tools.map((t) => t.name).sort()

function assertRefused(result: { isError: boolean; data: any }, capability: RegExp): void {
  assert.equal(result.isError, true, JSON.stringify(result.data))
  assert.equal(result.data.error.code, 'TOKEN_NOT_ALLOWED')
  assert.match(result.data.error.message, capability)
  assert.match(String(result.data.error.details.missingCapability), capability)
}

for (const store of STORES) {
  for (const kind of CLIENTS) {
    describe(`token scopes over MCP (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
      let server: TestServer
      let owner: TestUser
      let siteA: string
      let siteB: string
      const opened: McpClient[] = []
      const open = async (capabilities: string[], sites?: string[]) => {
        const { token } = await createToken(server, owner, { capabilities, sites })
        const client = await connect(server, token, { client: kind, toolsets: 'all' })
        opened.push(client)
        return client
      }

      before(async () => {
        server = await sharedServer(store.name)
        owner = await createUser(server)
        siteA = (await createSite(server, { owner })).websiteId
        siteB = (await createSite(server, { owner })).websiteId
      })
      after(async () => {
        for (const client of opened) await client.close()
      })

      it('tools/list shows each capability only its tools, and every tool to an unscoped token', async () => {
        const all = await connect(server, owner.token, { client: kind, toolsets: 'all' })
        opened.push(all)
        assert.deepEqual(await namesOf(all), Object.keys(TOOL_CAPABILITIES).sort())
        assert.deepEqual(await namesOf(await open(['read'])), toolsNeeding('read'))
        assert.deepEqual(await namesOf(await open(['preview'])), toolsNeeding('preview', 'publish', 'files'))
        assert.deepEqual(await namesOf(await open(['promote'])), toolsNeeding('promote', 'publish', 'files', 'create-site'))
        assert.deepEqual(await namesOf(await open(['content'])), toolsNeeding('content', 'files'))
        assert.deepEqual(await namesOf(await open(['forms'])), toolsNeeding('forms'))
        assert.deepEqual(await namesOf(await open(['manage'])), toolsNeeding('manage'))
        // A token limited to sites is not shown publish_website, which it may not call.
        const limited = await namesOf(await open([], [siteA]))
        assert.ok(!limited.includes('publish_website'))
        assert.ok(limited.includes('publish_version'))
      })

      it('read: reads, and is refused a publish naming preview and an unlisted tool naming manage', async () => {
        const client = await open(['read'])
        const site = await call(client, 'get_website', { websiteId: siteA })
        assert.equal(site.isError, false)
        assertRefused(await call(client, 'publish_version', { websiteId: siteA, files: bundle(), promote: false }), /preview/)
        assertRefused(await call(client, 'delete_website', { websiteId: siteA }), /manage/)
      })

      it('preview: stores a version that is not live; going live is refused, naming promote', async () => {
        const client = await open(['preview'])
        const stored = await call(client, 'publish_version', { websiteId: siteA, files: bundle('Preview'), promote: false })
        assert.equal(stored.isError, false, JSON.stringify(stored.data))
        assert.equal(stored.data.isCurrent, false)
        assertRefused(await call(client, 'publish_version', { websiteId: siteA, files: bundle('Live') }), /promote/)
        assertRefused(await call(client, 'promote_version', { websiteId: siteA, versionId: stored.data.jobId }), /promote/)
        const draft = await call(client, 'start_draft', { websiteId: siteA })
        assert.equal(draft.isError, false, JSON.stringify(draft.data))
      })

      it('promote: publishes live and promotes', async () => {
        const client = await open(['promote'])
        const live = await call(client, 'publish_version', { websiteId: siteA, files: bundle('Live') })
        assert.equal(live.isError, false, JSON.stringify(live.data))
        assert.equal(live.data.isCurrent, true)
        assert.equal((await call(client, 'promote_version', { websiteId: siteA, versionId: live.data.jobId })).isError, false)
        assertRefused(await call(client, 'list_websites'), /read/)
      })

      it('content, forms and manage: each its own tools', async () => {
        const content = await open(['content'])
        const collection = await call(content, 'create_collection', { websiteId: siteA, name: `c${kind}`, label: 'C', fields: [] })
        assert.equal(collection.isError, false, JSON.stringify(collection.data))
        assertRefused(await call(content, 'list_forms', { websiteId: siteA }), /forms/)
        const forms = await open(['forms'])
        assert.equal((await call(forms, 'list_forms', { websiteId: siteA })).isError, false)
        assertRefused(await call(forms, 'list_entries', { websiteId: siteA, collection: `c${kind}` }), /read/)
        const manage = await open(['manage'])
        const password = await call(manage, 'set_site_password', { websiteId: siteA, password: null })
        assert.equal(password.isError, false, JSON.stringify(password.data))
        assertRefused(await call(manage, 'create_collection', { websiteId: siteA, name: 'nope', label: 'N', fields: [] }), /content/)
      })

      it('sites: a site outside the token is NOT_FOUND, and list_websites leaves it out', async () => {
        const client = await open([], [siteA])
        const list = await call(client, 'list_websites')
        assert.deepEqual(
          list.data.items.map((item: { id: string }) => item.id),
          [siteA],
        )
        const outside = await call(client, 'get_website', { websiteId: siteB })
        assert.equal(outside.data.error.code, 'NOT_FOUND')
        const publish = await call(client, 'publish_version', { websiteId: siteB, files: bundle() })
        assert.equal(publish.data.error.code, 'NOT_FOUND')
        const refused = await call(client, 'publish_website', { category: 'other', files: bundle() })
        assert.equal(refused.data.error.code, 'TOKEN_NOT_ALLOWED')
      })
    })
  }
}
