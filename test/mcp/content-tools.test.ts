/**
 * The upload and entry tools over real HTTP, driven by the SDK's v2 and 1.x Clients on every
 * store: create_upload then a signed PUT then a publish by uploadId; upsert_entries, list_entries
 * and delete_entry against the same service calls as REST; ownership and bad input.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { siteWithCollection } from '../helpers/content.ts'
import { PNG } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { bundle, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** Every tool: the suite chooses them all. */
const TOOLS = [
  'cancel_schedule',
  'create_collection',
  'create_upload',
  'delete_entry',
  'delete_file',
  'delete_website',
  'diff_versions',
  'discard_draft',
  'edit_file',
  'get_collection',
  'get_entry',
  'get_job_status',
  'get_promotion_request',
  'get_site_traffic',
  'get_website',
  'import_asset',
  'list_collections',
  'list_entries',
  'list_files',
  'list_form_submissions',
  'list_forms',
  'list_schedules',
  'list_versions',
  'list_websites',
  'move_file',
  'promote_version',
  'publish_draft',
  'publish_version',
  'publish_website',
  'put_entry',
  'read_file',
  'request_promotion',
  'schedule_promotion',
  'screenshot_page',
  'set_site_password',
  'start_draft',
  'suggest_slug',
  'update_collection',
  'upsert_entries',
  'withdraw_promotion_request',
  'write_file',
]

const POSTS = [
  { slug: 'hello-world', publishedAt: '2026-01-03T10:00:00Z', data: { title: 'Hello world', body: { markdown: '# Hi\n\nFirst *post*.' } } },
  { slug: 'second', publishedAt: '2026-01-02T10:00:00Z', data: { title: 'Second', body: { html: '<p>Two<script>alert(1)</script></p>' }, price: 12 } },
  { slug: 'coming-soon', publishedAt: '2999-01-01T00:00:00Z', data: { title: 'Later', kind: 'news' } },
]

// The suites of both clients share a server per store.
const sharedServer = sharedTestServers()
for (const store of STORES) {
  for (const kind of CLIENTS) describeContentTools(store, kind)
}

function describeContentTools(store: (typeof STORES)[number], kind: (typeof CLIENTS)[number]) {
  describe(`MCP content tools (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: Awaited<ReturnType<typeof siteWithCollection>>
    let client: McpClient

    before(async () => {
      server = await sharedServer(store.name)
      owner = await siteWithCollection(server)
      client = await connect(server, owner.user.token, { client: kind, toolsets: 'all' })
    })
    after(() => client?.close())

    const entryArgs = (extra: Record<string, unknown> = {}) => ({ websiteId: owner.websiteId, collection: 'posts', ...extra })

    it('lists exactly the thirty-nine tools of all toolsets, with the hints of what each changes', async () => {
      const { tools } = await client.listTools()
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS)
      const hints = (name: string) => {
        const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tools.find((t) => t.name === name)!.annotations!
        return { readOnlyHint, destructiveHint, idempotentHint, openWorldHint }
      }
      assert.deepEqual(hints('create_upload'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false })
      assert.deepEqual(hints('list_entries'), { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
      assert.deepEqual(hints('upsert_entries'), { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
      assert.deepEqual(hints('delete_entry'), { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
      assert.deepEqual(hints('put_entry'), { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
      assert.deepEqual(hints('update_collection'), { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
      assert.deepEqual(hints('create_collection'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false })
      assert.deepEqual(hints('import_asset'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true })
      assert.deepEqual(hints('set_site_password'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false })
      for (const name of ['list_collections', 'get_collection', 'get_entry']) {
        assert.deepEqual(hints(name), { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }, name)
      }

      // Flat arguments: the path parameters next to the REST body's or query's own fields.
      const input = (name: string) => tools.find((t) => t.name === name)!.inputSchema as any
      assert.deepEqual(Object.keys(input('upsert_entries').properties), ['websiteId', 'collection', 'baseUrl', 'entries'])
      assert.deepEqual(Object.keys(input('list_entries').properties), ['websiteId', 'collection', 'cursor', 'limit'])
      assert.deepEqual(Object.keys(input('delete_entry').properties), ['websiteId', 'collection', 'entry'])
      assert.deepEqual(Object.keys(input('create_upload').properties.files.items.properties), ['filename', 'contentType', 'size'])
      assert.deepEqual(Object.keys(input('put_entry').properties), ['websiteId', 'collection', 'entry', 'publishedAt', 'createdAt', 'data', 'baseUrl'])
      assert.deepEqual(Object.keys(input('update_collection').properties), ['websiteId', 'collection', 'label', 'fields'])
      assert.deepEqual(Object.keys(input('import_asset').properties), ['websiteId', 'url', 'uploadId'])
      for (const name of TOOLS) assert.equal(input(name).additionalProperties, false, name)

      // Each batch item is shown as the entry input itself, and the description says where its fields are.
      const upsert = tools.find((t) => t.name === 'upsert_entries')!
      const item = input('upsert_entries').properties.entries.items
      assert.deepEqual(Object.keys(item.properties), ['slug', 'publishedAt', 'createdAt', 'data'])
      assert.deepEqual(item.required, ['slug', 'data'])
      assert.equal(item.additionalProperties, false)
      assert.equal(input('upsert_entries').properties.entries.maxItems, 100)
      assert.match(upsert.description!, /get_collection/)
      // The image forms that need no public image host are named where entries are written and uploads reserved.
      for (const form of [/\/_assets\/\{hash\}\.\{ext\}/, /upload:upl_…/, /data:image\/…;base64/]) assert.match(upsert.description!, form)
      assert.match(tools.find((t) => t.name === 'create_upload')!.description!, /upload:\{uploadId\}/)
      const website = tools.find((t) => t.name === 'get_website')!.outputSchema as any
      // A named schema the result holds more than once is given once, in its $defs.
      const files = website.properties.versions.items.properties.files.items
      const versionFile = files.$ref === undefined ? files : website.$defs[files.$ref.replace('#/$defs/', '')]
      assert.ok('sha256' in versionFile.properties, 'VersionFile carries sha256')
    })

    it('reserves an upload, takes the bytes by signed PUT, publishes them by uploadId and republishes them by sha256', async () => {
      const photo = randomBytes(150 * 1024)
      const reserved = await call(client, 'create_upload', { files: [{ filename: 'photo.webp', contentType: 'image/webp', size: photo.length }] })
      assert.equal(reserved.isError, false)
      const [upload] = reserved.data.uploads
      assert.equal(upload.method, 'PUT')
      assert.equal(upload.size, photo.length)

      const target = new URL(upload.uploadUrl)
      assert.deepEqual(upload.headers, { 'Content-Type': 'image/webp' })
      // As an agent would: the returned headers and the bytes, no token (lowercased to replace the helper's JSON default).
      const headers = Object.fromEntries(Object.entries(upload.headers as Record<string, string>).map(([name, value]) => [name.toLowerCase(), value]))
      const put = await server.api('PUT', target.pathname + target.search, { body: photo, headers })
      assert.equal(put.status, 200, put.text)
      assert.equal(put.body.uploadId, upload.uploadId)

      const files = [...bundle('With a photo'), { path: 'images/photo.webp', uploadId: upload.uploadId }]
      const published = await call(client, 'publish_version', { websiteId: owner.websiteId, files, message: 'Add a photo' })
      assert.equal(published.isError, false, JSON.stringify(published.data))
      const site = await call(client, 'get_website', { websiteId: owner.websiteId })
      const served = await server.site(site.data.slug, '/images/photo.webp')
      assert.equal(served.status, 200)
      assert.ok(served.body.equals(photo), 'the site serves the uploaded bytes')

      // Every file of the live version, sent back by the hash get_website reports.
      const live = site.data.versions.find((v: any) => v.isCurrent)
      assert.equal(live.files.find((f: any) => f.originalName === 'images/photo.webp').sha256, put.body.sha256)
      const byHash = live.files.map((f: any) => ({ path: f.originalName, sha256: f.sha256 }))
      const again = await call(client, 'publish_version', { websiteId: owner.websiteId, files: byHash, message: 'Same files' })
      assert.equal(again.isError, false, JSON.stringify(again.data))
      assert.equal(again.data.version, published.data.version + 1)
      assert.ok((await server.site(site.data.slug, '/images/photo.webp')).body.equals(photo))
      assert.match((await server.site(site.data.slug)).body.toString(), /With a photo/)
    })

    it('upserts entries re-runnably, pages through them and deletes by slug and by id, like REST', async () => {
      const first = await call(client, 'upsert_entries', entryArgs({ entries: POSTS }))
      assert.equal(first.isError, false, JSON.stringify(first.data))
      assert.deepEqual(first.data.counts, { created: 3, updated: 0, unchanged: 0, failed: 0 })
      assert.deepEqual(
        first.data.results.map((r: any) => [r.slug, r.status]),
        POSTS.map((p) => [p.slug, 'created']),
      )
      const [hello, second, later] = first.data.results.map((r: any) => r.entry)
      assert.match(hello.rendered.body, /<h1>Hi<\/h1>/)
      assert.doesNotMatch(second.rendered.body, /script/)
      assert.equal(later.live, false, 'a future publishedAt keeps the entry off the site')

      const rerun = await call(client, 'upsert_entries', entryArgs({ entries: POSTS }))
      assert.deepEqual(rerun.data.counts, { created: 0, updated: 0, unchanged: 3, failed: 0 })
      assert.ok(rerun.data.results.every((r: any) => r.status === 'unchanged'))

      const page1 = await call(client, 'list_entries', entryArgs({ limit: 2 }))
      assert.equal(page1.isError, false)
      assert.deepEqual(
        page1.data.items.map((e: any) => e.slug),
        ['coming-soon', 'hello-world'],
      )
      assert.equal(typeof page1.data.nextCursor, 'string')
      const page2 = await call(client, 'list_entries', entryArgs({ limit: 2, cursor: page1.data.nextCursor }))
      assert.deepEqual(
        page2.data.items.map((e: any) => e.slug),
        ['second'],
      )
      assert.equal(page2.data.nextCursor, null)
      const rest = await server.api('GET', `${owner.base}/entries?limit=2`, { token: owner.user.token })
      assert.deepEqual(page1.data, rest.body, 'the same page as listEntries')

      const bySlug = await call(client, 'delete_entry', entryArgs({ entry: 'second' }))
      assert.deepEqual(bySlug, { isError: false, data: { deleted: true } })
      const byId = await call(client, 'delete_entry', entryArgs({ entry: later.id }))
      assert.equal(byId.isError, false)
      const remaining = await call(client, 'list_entries', entryArgs())
      assert.deepEqual(
        remaining.data.items.map((e: any) => e.slug),
        ['hello-world'],
      )
      const gone = await call(client, 'delete_entry', entryArgs({ entry: 'second' }))
      assert.equal(gone.isError, true)
      assert.equal(gone.data.error.code, 'NOT_FOUND')
    })

    it('writes an entry whose image is an upload of the caller, and refuses one that is not theirs', async () => {
      const reserved = await call(client, 'create_upload', { files: [{ filename: 'dot.png', size: PNG.length }] })
      const [upload] = reserved.data.uploads
      const target = new URL(upload.uploadUrl)
      assert.equal((await server.api('PUT', target.pathname + target.search, { body: PNG, headers: { 'content-type': 'image/png' } })).status, 200)
      const data = { title: 'With a dot', cover: `upload:${upload.uploadId}`, body: { markdown: `![dot](upload:${upload.uploadId})` } }
      const written = await call(client, 'put_entry', entryArgs({ entry: 'dot', data }))
      assert.equal(written.isError, false, JSON.stringify(written.data))
      assert.match(written.data.entry.rendered.cover, /^\/_assets\/[0-9a-f]{64}\.png$/)
      assert.ok(written.data.entry.rendered.body.includes(`src="${written.data.entry.rendered.cover}"`))

      const stranger = await siteWithCollection(server)
      const theirs = await connect(server, stranger.user.token, { client: kind, toolsets: 'all' })
      try {
        const args = { websiteId: stranger.websiteId, collection: 'posts', entry: 'dot', data: { title: 'Theirs', cover: data.cover } }
        const refused = await call(theirs, 'put_entry', args)
        assert.equal(refused.isError, true)
        assert.equal(refused.data.error.code, 'VALIDATION_FAILED')
        assert.match(refused.data.error.fields['data.cover'], /is not a known upload of yours/)
      } finally {
        await theirs.close()
      }
    })

    it('fails one bad entry on its own result, not the call', async () => {
      const entries = [
        { slug: 'good-one', data: { title: 'Good' } },
        { slug: 'Bad Slug!', data: { title: 'Bad slug' } },
        { slug: 'no-title', data: { title: 42, price: -1 } },
        { slug: 'twice', data: { title: 'A' } },
        { slug: 'twice', data: { title: 'B' } },
      ]
      const result = await call(client, 'upsert_entries', entryArgs({ collection: 'posts', entries }))
      assert.equal(result.isError, false)
      assert.deepEqual(
        result.data.results.map((r: any) => r.status),
        ['created', 'failed', 'failed', 'failed', 'failed'],
      )
      assert.deepEqual(result.data.counts, { created: 1, updated: 0, unchanged: 0, failed: 4 })
      const [, badSlug, badData, dup] = result.data.results
      assert.equal(badSlug.error.code, 'VALIDATION_FAILED')
      assert.equal(badSlug.error.field, 'slug')
      assert.equal(badData.error.code, 'VALIDATION_FAILED')
      assert.ok('data.title' in badData.error.fields && 'data.price' in badData.error.fields)
      assert.equal(dup.error.code, 'DUPLICATE_SLUG')
      const rest = await server.api('GET', `${owner.base}/entries/twice`, { token: owner.user.token })
      assert.equal(rest.status, 404, 'no item of a duplicated slug is written')
    })

    it('refuses malformed calls as a whole with VALIDATION_FAILED, like REST, and writes nothing', async () => {
      const before = (await call(client, 'list_entries', entryArgs({ limit: 100 }))).data.items.length
      const cases: Array<[string, Record<string, unknown>, string[]]> = [
        ['upsert_entries', entryArgs({ entries: 'all of them' }), ['entries']],
        ['upsert_entries', entryArgs({ entries: Array.from({ length: 101 }, (_, i) => ({ slug: `s${i}`, data: { title: 'x' } })) }), ['entries']],
        ['upsert_entries', entryArgs({ entries: [], collectionn: 'posts' }), ['collectionn']],
        ['list_entries', entryArgs({ limit: 0 }), ['limit']],
        ['list_entries', entryArgs({ limit: '5' }), ['limit']],
        ['list_entries', { websiteId: owner.websiteId }, ['collection']],
        ['delete_entry', entryArgs({ entry: 'x'.repeat(101) }), ['entry']],
        ['create_upload', { files: [{ size: 3 * 1024 * 1024, filename: '../etc/passwd' }] }, ['files[0].size', 'files[0].filename']],
        ['create_upload', { files: [] }, ['files']],
      ]
      for (const [tool, args, fields] of cases) {
        const result = await call(client, tool, args)
        assert.equal(result.isError, true, tool)
        assert.equal(result.data.error.code, 'VALIDATION_FAILED', tool)
        for (const field of fields) assert.ok(field in result.data.error.fields, `${tool}: ${field} named in ${JSON.stringify(result.data.error.fields)}`)
      }
      const badBase = await call(client, 'upsert_entries', entryArgs({ baseUrl: 'javascript:alert(1)', entries: [{ slug: 'x', data: { title: 'x' } }] }))
      assert.equal(badBase.isError, true)
      assert.equal(badBase.data.error.code, 'VALIDATION_FAILED')
      const unknownCollection = await call(client, 'list_entries', entryArgs({ collection: 'nope' }))
      assert.equal(unknownCollection.data.error.code, 'NOT_FOUND')
      assert.equal((await call(client, 'list_entries', entryArgs({ limit: 100 }))).data.items.length, before)
    })

    it("keeps another user's site invisible: NOT_FOUND, and nothing changes", async () => {
      const stranger = await server.user()
      const other = await connect(server, stranger.token, { client: kind, toolsets: 'all' })
      try {
        const before = await call(client, 'list_entries', entryArgs({ limit: 100 }))
        for (const [tool, args] of [
          ['list_entries', entryArgs()],
          ['upsert_entries', entryArgs({ entries: [{ slug: 'hello-world', data: { title: 'Defaced' } }] })],
          ['delete_entry', entryArgs({ entry: 'hello-world' })],
        ] as const) {
          const result = await call(other, tool, args)
          assert.equal(result.isError, true, tool)
          assert.equal(result.data.error.code, 'NOT_FOUND', tool)
        }
        assert.deepEqual(await call(client, 'list_entries', entryArgs({ limit: 100 })), before)
      } finally {
        await other.close()
      }
    })
  })
}
