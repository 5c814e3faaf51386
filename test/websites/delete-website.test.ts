/**
 * Deleting a website over real HTTP, REST and MCP: owner only; the site and everything that hangs
 * off it go at once (its live and preview URLs, its slug); the blobs only it held leave the data
 * dir, and a blob that anything else still refers to stays.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { CLIENTS, call, connect } from '../helpers/mcp.ts'
import { addEditor, assertError, createUser, PNG, sha256, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

type File = { path: string; content: string; contentEncoding?: 'base64' }

/** The 1x1 PNG, with bytes after its end that keep it a PNG and make each copy a blob of its own. */
const png = (tag: string) => Buffer.concat([PNG, Buffer.from(tag)])

/** An HTML page long enough to be stored with .br and .gz variants, unique to `tag`. */
const page = (tag: string) =>
  `<!doctype html><html><head><title>${tag}</title><link rel="stylesheet" href="shared.css"></head><body><h1>${tag}</h1>${'<p>Fresh bread every morning.</p>'.repeat(40)}</body></html>`

/** A stylesheet two sites publish byte for byte: one blob. */
const SHARED_CSS = `body { font-family: Georgia, serif; color: #333; } ${'.menu li { margin: 0 0 4px; } '.repeat(20)}`

for (const store of STORES) {
  describe(`deleteWebsite (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    const db = () => server.server.db.kysely
    const blobFile = (hash: string, suffix = '') => path.join(server.config.dataDir, 'blobs', hash.slice(0, 2), hash + suffix)
    const blobFiles = (hash: string) => ['', '.br', '.gz'].filter((suffix) => existsSync(blobFile(hash, suffix)))
    const blobRow = async (hash: string) => (await db().selectFrom('blobs').select('hash').where('hash', '=', hash).executeTakeFirst()) !== undefined

    async function createSite(user: TestUser, files: File[], body: Record<string, unknown> = {}) {
      const res = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'restaurant', files, ...body } })
      assert.equal(res.status, 201, res.text)
      return res.body as { websiteId: string; slug: string; jobId: string }
    }
    const deleteSite = (user: TestUser, websiteId: string) => server.api('DELETE', `/v1/websites/${websiteId}`, { token: user.token })

    /** Every row that hangs off a website, counted per table. */
    async function rowsOf(websiteId: string) {
      const count = async (query: { execute(): Promise<unknown[]> }) => (await query.execute()).length
      const versionIds = (await db().selectFrom('versions').select('id').where('website_id', '=', websiteId).execute()).map((r) => r.id)
      const collectionIds = (await db().selectFrom('collections').select('id').where('website_id', '=', websiteId).execute()).map((r) => r.id)
      return {
        websites: await count(db().selectFrom('websites').select('id').where('id', '=', websiteId)),
        versions: versionIds.length,
        versionFiles: versionIds.length ? await count(db().selectFrom('version_files').select('path').where('version_id', 'in', versionIds)) : 0,
        members: await count(db().selectFrom('website_members').select('user_id').where('website_id', '=', websiteId)),
        collections: collectionIds.length,
        entries: collectionIds.length ? await count(db().selectFrom('entries').select('id').where('collection_id', 'in', collectionIds)) : 0,
        assets: await count(db().selectFrom('assets').select('id').where('website_id', '=', websiteId)),
      }
    }

    /** A site with two versions (the second stored for review), an editor, a collection with an entry and a library image. */
    async function fullSite(owner: TestUser, tag: string) {
      const site = await createSite(owner, [
        { path: 'index.html', content: page(`${tag} v1`) },
        { path: 'shared.css', content: SHARED_CSS },
      ])
      const draft = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, {
        token: owner.token,
        body: { files: [{ path: 'index.html', content: page(`${tag} v2`) }], promote: false },
      })
      assert.equal(draft.status, 201, draft.text)
      const collection = await server.api('POST', `/v1/websites/${site.websiteId}/collections`, {
        token: owner.token,
        body: { name: 'news', label: 'News', fields: [{ name: 'title', label: 'Title', type: 'text' }] },
      })
      assert.equal(collection.status, 201, collection.text)
      const entry = await server.api('PUT', `/v1/websites/${site.websiteId}/collections/news/entries/opening`, {
        token: owner.token,
        body: { data: { title: 'We open' } },
      })
      assert.ok(entry.status === 201 || entry.status === 200, entry.text)
      const image = png(`${tag} image`)
      const asset = await server.api('POST', `/v1/websites/${site.websiteId}/assets`, {
        token: owner.token,
        body: { url: `data:image/png;base64,${image.toString('base64')}` },
      })
      assert.equal(asset.status, 201, asset.text)
      const editor = await addEditor(server, site.websiteId)
      return { ...site, editor, imageHash: sha256(image), pageHashes: [sha256(page(`${tag} v1`)), sha256(page(`${tag} v2`))] as const }
    }

    test('the owner deletes a site: 204, its live and preview URLs are 404 at once, and its slug is free at once', async () => {
      const owner = await createUser(server)
      const site = await fullSite(owner, 'Doomed bakery')
      // Served, and so cached, before the delete.
      for (const label of [site.slug, `${site.slug}--v1`, `${site.slug}--v2`]) assert.equal((await server.site(label)).status, 200, label)
      assert.equal((await server.site(site.slug, '/news-opening')).status, 200)
      assert.deepEqual(await rowsOf(site.websiteId), { websites: 1, versions: 2, versionFiles: 3, members: 1, collections: 1, entries: 1, assets: 1 })

      const res = await deleteSite(owner, site.websiteId)
      assert.equal(res.status, 204, res.text)
      assert.equal(res.text, '')

      for (const label of [site.slug, `${site.slug}--v1`, `${site.slug}--v2`]) assert.equal((await server.site(label)).status, 404, label)
      assert.equal((await server.site(site.slug, '/news-opening')).status, 404)
      assert.deepEqual(await rowsOf(site.websiteId), { websites: 0, versions: 0, versionFiles: 0, members: 0, collections: 0, entries: 0, assets: 0 })
      assertError(await server.api('GET', `/v1/websites/${site.websiteId}`, { token: owner.token }), 404, 'NOT_FOUND')
      const listed = await server.api('GET', '/v1/websites', { token: site.editor.token })
      assert.equal(
        listed.body.items.some((s: { id: string }) => s.id === site.websiteId),
        false,
        'gone for its editor too',
      )

      // Someone else takes the slug at once, and its address serves the new site.
      const newcomer = await createUser(server)
      const taken = await createSite(newcomer, [{ path: 'index.html', content: '<!doctype html><title>New</title><h1>Newcomer</h1>' }], { slug: site.slug })
      assert.equal(taken.slug, site.slug)
      const served = await server.site(site.slug)
      assert.equal(served.status, 200)
      assert.match(served.body.toString(), /Newcomer/)
      assert.equal((await server.site(`${site.slug}--v2`)).status, 404, 'the new site has no version 2')
    })

    test("the site's own blobs leave the data dir; a blob another site, library image or upload still holds stays", async () => {
      const owner = await createUser(server)
      const site = await fullSite(owner, 'Blob bakery')
      // Another user's site publishes the same stylesheet, so its blob is shared.
      const neighbour = await createUser(server)
      const other = await createSite(neighbour, [
        { path: 'index.html', content: page('Neighbour') },
        { path: 'shared.css', content: SHARED_CSS },
      ])
      // The neighbour's library holds the same image bytes as one of the doomed site's files.
      const keptImage = png('kept image')
      const withImage = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, {
        token: owner.token,
        body: {
          files: [
            { path: 'index.html', content: page('Blob bakery v3') },
            { path: 'logo.png', content: keptImage.toString('base64'), contentEncoding: 'base64' },
          ],
        },
      })
      assert.equal(withImage.status, 201, withImage.text)
      const imported = await server.api('POST', `/v1/websites/${other.websiteId}/assets`, {
        token: neighbour.token,
        body: { url: `data:image/png;base64,${keptImage.toString('base64')}` },
      })
      assert.equal(imported.status, 201, imported.text)
      // And the owner's own upload holds the bytes of another file.
      const uploadedBytes = png('uploaded')
      const reserved = await server.api('POST', '/v1/uploads', { token: owner.token, body: { files: [{ filename: 'up.png', size: uploadedBytes.length }] } })
      assert.equal(reserved.status, 201, reserved.text)
      const target = new URL(reserved.body.uploads[0].uploadUrl)
      const put = await fetch(server.url + target.pathname + target.search, { method: 'PUT', headers: reserved.body.uploads[0].headers, body: uploadedBytes })
      assert.equal(put.status, 200, await put.text())
      const byUpload = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, {
        token: owner.token,
        body: {
          files: [
            { path: 'index.html', content: page('Blob bakery v4') },
            { path: 'up.png', uploadId: reserved.body.uploads[0].uploadId },
          ],
        },
      })
      assert.equal(byUpload.status, 201, byUpload.text)

      const unique = [...site.pageHashes, sha256(page('Blob bakery v3')), sha256(page('Blob bakery v4')), site.imageHash]
      const kept = [sha256(SHARED_CSS), sha256(keptImage), sha256(uploadedBytes)]
      await server.server.blobVariants.settled() // variants are written after a publish answers
      for (const hash of unique) {
        assert.ok(blobFiles(hash).includes(''), `${hash} is stored`)
        assert.equal(await blobRow(hash), true)
      }
      assert.deepEqual(blobFiles(site.pageHashes[0]), ['', '.br', '.gz'], 'pages are stored with their variants')
      const variantsOfShared = blobFiles(sha256(SHARED_CSS))
      assert.ok(variantsOfShared.includes('.br'), 'the stylesheet has a br variant')

      assert.equal((await deleteSite(owner, site.websiteId)).status, 204)

      for (const hash of unique) {
        assert.deepEqual(blobFiles(hash), [], `every file of ${hash} is gone`)
        assert.equal(await blobRow(hash), false, `the row of ${hash} is gone`)
      }
      for (const hash of kept) {
        assert.ok(blobFiles(hash).includes(''), `${hash} is kept`)
        assert.equal(await blobRow(hash), true, `the row of ${hash} is kept`)
      }
      assert.deepEqual(blobFiles(sha256(SHARED_CSS)), variantsOfShared, 'with its variants')

      // The other site still serves the shared blob, plain and precompressed.
      const css = await server.site(other.slug, '/shared.css')
      assert.equal(css.status, 200)
      assert.equal(css.body.toString(), SHARED_CSS)
      const br = await server.site(other.slug, '/shared.css', { headers: { 'accept-encoding': 'br' } })
      assert.equal(br.status, 200)
      assert.equal(br.headers['content-encoding'], 'br')
      const asset = await server.site(other.slug, new URL(imported.body.url, 'http://x').pathname)
      assert.equal(asset.status, 200)
      assert.deepEqual(asset.body, keptImage)
      // The upload still serves a publish by reference.
      const again = await server.api('POST', '/v1/websites', {
        token: owner.token,
        body: {
          category: 'other',
          files: [
            { path: 'index.html', content: page('Again') },
            { path: 'up.png', uploadId: reserved.body.uploads[0].uploadId },
          ],
        },
      })
      assert.equal(again.status, 201, again.text)
      assert.deepEqual((await server.site(again.body.slug, '/up.png')).body, uploadedBytes)
    })

    test('an editor gets 403 OWNER_ONLY and nothing changes', async () => {
      const owner = await createUser(server)
      const site = await fullSite(owner, 'Kept bakery')
      const before = await rowsOf(site.websiteId)
      const res = await deleteSite(site.editor, site.websiteId)
      assertError(res, 403, 'OWNER_ONLY')
      assert.match(res.body.error.message, /owner/)
      assert.deepEqual(await rowsOf(site.websiteId), before)
      assert.equal((await server.site(site.slug)).status, 200)
      assert.equal((await server.site(`${site.slug}--v2`)).status, 200)
      await server.server.blobVariants.settled()
      for (const hash of [...site.pageHashes, site.imageHash]) assert.deepEqual(blobFiles(hash), hash === site.imageHash ? [''] : ['', '.br', '.gz'])
      assert.equal((await server.api('GET', `/v1/websites/${site.websiteId}`, { token: site.editor.token })).status, 200)
    })

    test('a stranger, an unknown id and a second delete are 404 NOT_FOUND', async () => {
      const owner = await createUser(server)
      const site = await createSite(owner, [{ path: 'index.html', content: page('Twice') }])
      const stranger = await createUser(server)
      assertError(await deleteSite(stranger, site.websiteId), 404, 'NOT_FOUND')
      assert.equal((await server.site(site.slug)).status, 200, 'untouched')
      assertError(await deleteSite(owner, 'web_doesnotexist'), 404, 'NOT_FOUND')
      assert.equal((await deleteSite(owner, site.websiteId)).status, 204)
      assertError(await deleteSite(owner, site.websiteId), 404, 'NOT_FOUND')
      // Publishing to it is NOT_FOUND too.
      const publish = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, {
        token: owner.token,
        body: { files: [{ path: 'index.html', content: 'x' }] },
      })
      assertError(publish, 404, 'NOT_FOUND')
      assertError(await server.api('DELETE', `/v1/websites/${site.websiteId}`), 401, 'AUTH_REQUIRED')
    })

    for (const kind of CLIENTS) {
      test(`the MCP tool delete_website does the same (${kind} client)`, async () => {
        const owner = await createUser(server)
        const site = await fullSite(owner, `Tool bakery ${kind}`)
        const client = await connect(server, owner.token, { client: kind })
        const editorClient = await connect(server, site.editor.token, { client: kind })
        try {
          const { tools } = await client.listTools()
          const tool = tools.find((t) => t.name === 'delete_website')
          assert.ok(tool, 'delete_website is listed')
          assert.deepEqual(tool.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
          assert.deepEqual(Object.keys(tool.inputSchema.properties), ['websiteId'])

          const refused = await call(editorClient, 'delete_website', { websiteId: site.websiteId })
          assert.equal(refused.isError, true)
          assert.equal(refused.data.error.code, 'OWNER_ONLY')
          assert.equal((await server.site(site.slug)).status, 200)

          const deleted = await call(client, 'delete_website', { websiteId: site.websiteId })
          assert.equal(deleted.isError, false)
          assert.deepEqual(deleted.data, { deleted: true, websiteId: site.websiteId })
          assert.equal((await server.site(site.slug)).status, 404)
          assert.equal((await server.site(`${site.slug}--v2`)).status, 404)
          for (const hash of [...site.pageHashes, site.imageHash]) assert.deepEqual(blobFiles(hash), [])

          const again = await call(client, 'delete_website', { websiteId: site.websiteId })
          assert.equal(again.isError, true)
          assert.equal(again.data.error.code, 'NOT_FOUND')
          const bad = await call(client, 'delete_website', { websiteId: site.websiteId, force: true })
          assert.equal(bad.data.error.code, 'VALIDATION_FAILED')
        } finally {
          await client.close()
          await editorClient.close()
        }
      })
    }

    test('the OpenAPI document lists deleteWebsite: 204 without a body, and its errors', async () => {
      const doc = (await server.api('GET', '/openapi.json')).body
      const operation = doc.paths['/v1/websites/{websiteId}'].delete
      assert.equal(operation.operationId, 'deleteWebsite')
      assert.ok(operation.summary && operation.description, 'summary and description')
      assert.deepEqual(operation.security, [{ bearerAuth: ['mcp'] }])
      assert.deepEqual(Object.keys(operation.responses).sort(), ['204', '401', '403', '404', '422', '500'])
      assert.equal(operation.responses['204'].content, undefined, '204 has no body')
      for (const [status, codes] of [
        ['401', ['AUTH_REQUIRED']],
        ['403', ['TOKEN_NOT_ALLOWED', 'OWNER_ONLY']],
        ['404', ['NOT_FOUND']],
        // A query parameter it does not take (it takes none).
        ['422', ['VALIDATION_FAILED']],
      ] as const) {
        assert.equal(operation.responses[status].content['application/json'].schema.$ref, '#/components/schemas/Error')
        for (const code of codes) assert.match(operation.responses[status].description, new RegExp(`\`${code}\``), `${status} names ${code}`)
      }
    })
  })
}
