/**
 * The collection, single-entry and image tools over real HTTP, driven by the SDK's v2 and 1.x
 * Clients on every store: what an MCP-only token needs to model content and write it, with the
 * same service calls and answers as REST, and every error read as a result by both clients.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PNG } from '../helpers/factories.ts'
import { startImageHost } from '../helpers/content.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { bundle, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const FIELDS = [
  { name: 'title', label: 'Title', type: 'text', required: true, maxLength: 100 },
  { name: 'body', label: 'Body', type: 'richText' },
  { name: 'cover', label: 'Cover', type: 'image' },
  { name: 'price', label: 'Price', type: 'number', min: 0 },
]

// The suites of both clients share an image host, and a server per store.
let images: Awaited<ReturnType<typeof startImageHost>>
before(async () => {
  images = await startImageHost((n) => (n === 1 ? PNG : undefined))
})
after(() => images?.close())
const sharedServer = sharedTestServers()
for (const store of STORES) {
  for (const kind of CLIENTS) describeCollectionTools(store, kind)
}

function describeCollectionTools(store: (typeof STORES)[number], kind: (typeof CLIENTS)[number]) {
  describe(`MCP collection, entry and image tools (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: Awaited<ReturnType<TestServer['user']>>
    let client: McpClient
    let websiteId: string

    before(async () => {
      server = await sharedServer(store.name, images.env)
      // A token for MCP alone: everything below goes through the tools.
      owner = await server.user(undefined, 'mcp')
      client = await connect(server, owner.token, { client: kind, toolsets: 'all' })
      const site = await call(client, 'publish_website', { name: 'Shop', category: 'other', files: bundle('Shop') })
      assert.equal(site.isError, false, JSON.stringify(site.data))
      websiteId = site.data.websiteId
    })
    after(() => client?.close())

    it('creates, reads, lists and updates a collection, as REST does', async () => {
      const created = await call(client, 'create_collection', { websiteId, name: 'products', label: 'Products', fields: FIELDS })
      assert.equal(created.isError, false, JSON.stringify(created.data))
      assert.equal(created.data.entryPath, '/products-{slug}')
      assert.deepEqual(
        created.data.fields.map((f: any) => f.name),
        ['title', 'body', 'cover', 'price'],
      )

      const got = await call(client, 'get_collection', { websiteId, collection: 'products' })
      assert.deepEqual(got.data, created.data)
      const list = await call(client, 'list_collections', { websiteId })
      assert.deepEqual(
        list.data.items.map((c: any) => c.name),
        ['products'],
      )

      const updated = await call(client, 'update_collection', {
        websiteId,
        collection: 'products',
        label: 'Our products',
        fields: FIELDS.filter((f) => f.name !== 'price'),
      })
      assert.equal(updated.isError, false, JSON.stringify(updated.data))
      assert.equal(updated.data.label, 'Our products')
      assert.deepEqual(
        updated.data.removedFields.map((f: any) => f.name),
        ['price'],
      )

      const exists = await call(client, 'create_collection', { websiteId, name: 'products', label: 'Again', fields: [] })
      assert.deepEqual([exists.isError, exists.data.error.code], [true, 'COLLECTION_EXISTS'])
      const missing = await call(client, 'get_collection', { websiteId, collection: 'nothing' })
      assert.deepEqual([missing.isError, missing.data.error.code], [true, 'NOT_FOUND'])
      const badName = await call(client, 'create_collection', { websiteId, name: 'Bad-Name', label: 'x', fields: [{ name: 'x', type: 'colour' }] })
      assert.equal(badName.data.error.code, 'VALIDATION_FAILED')
      for (const field of ['name', 'fields[0].label', 'fields[0].type']) assert.ok(field in badName.data.error.fields, `${field} named`)
    })

    it('puts, reads and replaces one entry by slug, and says whether it was created, updated or unchanged', async () => {
      await call(client, 'create_collection', { websiteId, name: 'notes', label: 'Notes', fields: FIELDS })
      const args = { websiteId, collection: 'notes', entry: 'first-note' }
      const data = { title: 'First', body: { markdown: 'Hello *there*' }, cover: `${images.origin}/img/1.png` }
      const created = await call(client, 'put_entry', { ...args, data })
      assert.equal(created.isError, false, JSON.stringify(created.data))
      assert.equal(created.data.status, 'created')
      assert.equal(created.data.entry.path, '/notes-first-note')
      assert.match(created.data.entry.rendered.body, /<em>there<\/em>/)
      assert.match(created.data.entry.rendered.cover, /^\/_assets\/[0-9a-f]{64}\.png$/)

      assert.equal((await call(client, 'put_entry', { ...args, data })).data.status, 'unchanged')
      const replaced = await call(client, 'put_entry', { ...args, data: { ...data, title: 'First, again' } })
      assert.equal(replaced.data.status, 'updated')

      const bySlug = await call(client, 'get_entry', args)
      const byId = await call(client, 'get_entry', { ...args, entry: created.data.entry.id })
      assert.deepEqual(bySlug.data, byId.data)
      assert.equal(bySlug.data.data.title, 'First, again')
      const page = await server.site((await call(client, 'list_websites')).data.items[0].slug, '/notes-first-note')
      assert.equal(page.status, 200)
      assert.match(page.body.toString(), /First, again/)

      const invalid = await call(client, 'put_entry', { ...args, data: { title: 42, price: -1 } })
      assert.deepEqual([invalid.isError, invalid.data.error.code], [true, 'VALIDATION_FAILED'])
      assert.ok('data.title' in invalid.data.error.fields)
      const badSlug = await call(client, 'put_entry', { ...args, entry: 'Not A Slug', data })
      assert.equal(badSlug.data.error.code, 'VALIDATION_FAILED')
      const unknown = await call(client, 'get_entry', { ...args, entry: 'nope' })
      assert.deepEqual([unknown.isError, unknown.data.error.code], [true, 'NOT_FOUND'])
    })

    it('imports an image by URL and by upload into the library, and refuses a call giving neither', async () => {
      const byUrl = await call(client, 'import_asset', { websiteId, url: `${images.origin}/img/1.png` })
      assert.equal(byUrl.isError, false, JSON.stringify(byUrl.data))
      assert.equal(byUrl.data.contentType, 'image/png')
      assert.equal(byUrl.data.url, `/_assets/${byUrl.data.hash}.png`)
      assert.equal(byUrl.data.sourceUrl, `${images.origin}/img/1.png`)
      const again = await call(client, 'import_asset', { websiteId, url: `${images.origin}/img/1.png` })
      assert.equal(again.data.id, byUrl.data.id, 'a URL already in the library returns the stored asset')

      const reserved = await call(client, 'create_upload', { files: [{ filename: 'dot.png', contentType: 'image/png', size: PNG.length }] })
      const [upload] = reserved.data.uploads
      const target = new URL(upload.uploadUrl)
      const put = await server.api('PUT', target.pathname + target.search, { body: PNG, headers: { 'content-type': 'image/png' } })
      assert.equal(put.status, 200, put.text)
      const byUpload = await call(client, 'import_asset', { websiteId, uploadId: upload.uploadId })
      assert.equal(byUpload.isError, false, JSON.stringify(byUpload.data))
      assert.equal(byUpload.data.hash, byUrl.data.hash)
      assert.equal(byUpload.data.sourceUrl, null)

      const neither = await call(client, 'import_asset', { websiteId })
      assert.deepEqual([neither.isError, neither.data.error.code], [true, 'VALIDATION_FAILED'])
      const missing = await call(client, 'import_asset', { websiteId, url: `${images.origin}/img/2.png` })
      assert.deepEqual([missing.isError, missing.data.error.code], [true, 'FETCH_FAILED'])
    })

    it("keeps another user's site invisible to every new tool: NOT_FOUND", async () => {
      const stranger = await server.user(undefined, 'mcp')
      const other = await connect(server, stranger.token, { client: kind, toolsets: 'all' })
      try {
        for (const [tool, args] of [
          ['list_collections', { websiteId }],
          ['get_collection', { websiteId, collection: 'products' }],
          ['create_collection', { websiteId, name: 'stolen', label: 'x', fields: [] }],
          ['update_collection', { websiteId, collection: 'products', label: 'Defaced' }],
          ['get_entry', { websiteId, collection: 'notes', entry: 'first-note' }],
          ['put_entry', { websiteId, collection: 'notes', entry: 'first-note', data: { title: 'Defaced' } }],
          ['import_asset', { websiteId, url: `${images.origin}/img/1.png` }],
        ] as const) {
          const result = await call(other, tool, args)
          assert.equal(result.isError, true, tool)
          assert.equal(result.data.error.code, 'NOT_FOUND', tool)
        }
      } finally {
        await other.close()
      }
      assert.equal((await call(client, 'get_collection', { websiteId, collection: 'products' })).data.label, 'Our products')
    })
  })
}
