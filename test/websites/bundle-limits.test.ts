/**
 * The bundle limits an operator sets (PLINTH_MAX_FILES, PLINTH_MAX_PAGES, PLINTH_MAX_FILE_BYTES,
 * PLINTH_MAX_BUNDLE_BYTES) over real HTTP: the authoring rules, the request schemas, the JSON
 * body limit, uploads, the OpenAPI document and the MCP tools all say and do the same; unset, they
 * are the interface's.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { connect } from '../helpers/mcp.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const MiB = 1024 * 1024

/** index.html and `count - 1` small stylesheets: a bundle of `count` files, one page. */
const manyFiles = (count: number) => [
  { path: 'index.html', content: '<!doctype html><title>Many</title><link rel="stylesheet" href="css/0.css">' },
  ...Array.from({ length: count - 1 }, (_, i) => ({ path: `css/${i}.css`, content: `.c${i} { color: #${String(i).padStart(3, '0')} }` })),
]

/** `count` pages. */
const manyPages = (count: number) => [
  { path: 'index.html', content: '<!doctype html><title>Home</title>' },
  ...Array.from({ length: count - 1 }, (_, i) => ({ path: `p${i}.html`, content: `<!doctype html><title>Page ${i}</title>` })),
]

type Violation = { code: string; message: string }

for (const store of STORES) {
  describe(`bundle limits an operator sets (${store.name})`, { skip: store.skip }, () => {
    let standard: TestServer
    let raised: TestServer
    let lowered: TestServer
    before(async () => {
      standard = await startTestServer(store.name)
      raised = await startTestServer(store.name, {
        PLINTH_MAX_FILES: '60',
        PLINTH_MAX_PAGES: '20',
        PLINTH_MAX_FILE_BYTES: String(13 * MiB),
        PLINTH_MAX_BUNDLE_BYTES: String(13 * MiB),
      })
      lowered = await startTestServer(store.name, { PLINTH_MAX_FILES: '3', PLINTH_MAX_PAGES: '2', PLINTH_MAX_FILE_BYTES: '1024' })
    })
    after(async () => {
      await standard?.close()
      await raised?.close()
      await lowered?.close()
    })

    test('a 41-file bundle is refused by default and published where the limit is raised, as a site and as a version', async () => {
      const files = manyFiles(41)
      const user = await standard.user()
      const refused = await standard.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.equal(refused.status, 422, refused.text)
      assert.equal(refused.body.error.code, 'PUBLISH_INVALID')
      const [tooMany] = refused.body.error.violations as Violation[]
      assert.equal(tooMany!.code, 'TOO_MANY_FILES')
      assert.match(tooMany!.message, /has 41 files; at most 40 are allowed/)

      const owner = await raised.user()
      const created = await raised.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files } })
      assert.equal(created.status, 201, created.text)
      const served = await raised.site(created.body.slug, '/css/39.css')
      assert.equal(served.status, 200)
      assert.equal(served.body.toString(), files[40]!.content)
      const version = await raised.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token, body: { files: manyFiles(60) } })
      assert.equal(version.status, 201, version.text)
      const over = await raised.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token, body: { files: manyFiles(61) } })
      assert.equal(over.status, 422)
      assert.match((over.body.error.violations as Violation[])[0]!.message, /has 61 files; at most 60 are allowed/)
    })

    test('pages: 16 are refused by default and published where the limit is raised', async () => {
      const user = await standard.user()
      const refused = await standard.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: manyPages(16) } })
      assert.deepEqual(
        (refused.body.error.violations as Violation[]).map((v) => v.code),
        ['TOO_MANY_PAGES'],
      )
      const owner = await raised.user()
      const created = await raised.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: manyPages(20) } })
      assert.equal(created.status, 201, created.text)
    })

    test('a lowered limit refuses what the interface allows, and says the lowered number', async () => {
      const user = await lowered.user()
      const refused = await lowered.api('POST', '/v1/websites', {
        token: user.token,
        body: { category: 'other', files: [...manyPages(3), { path: 'big.txt', content: 'x'.repeat(1025) }] },
      })
      assert.equal(refused.status, 422, refused.text)
      const violations = refused.body.error.violations as Violation[]
      assert.deepEqual(
        violations.map((v) => v.code),
        ['TOO_MANY_FILES', 'TOO_MANY_PAGES', 'FILE_TOO_LARGE'],
      )
      assert.match(violations[0]!.message, /at most 3 are allowed/)
      assert.match(violations[1]!.message, /at most 2 are allowed/)
      assert.match(violations[2]!.message, /at most 1 KiB/)
      const accepted = await lowered.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: manyFiles(3) } })
      assert.equal(accepted.status, 201, accepted.text)
    })

    test('a raised bundle size raises the JSON body limit with it: a body over 16 MiB is published', async () => {
      const owner = await raised.user()
      const binary = randomBytes(12.5 * MiB)
      const body = {
        category: 'other',
        files: [
          { path: 'index.html', content: '<title>Big</title>' },
          { path: 'data.bin', content: binary.toString('base64'), contentEncoding: 'base64' },
        ],
      }
      assert.ok(JSON.stringify(body).length > 16 * MiB, 'over the default body limit')
      const created = await raised.api('POST', '/v1/websites', { token: owner.token, body })
      assert.equal(created.status, 201, created.text.slice(0, 500))
      assert.equal(created.body.bytesWritten, binary.length + '<title>Big</title>'.length)
      assert.deepEqual((await raised.site(created.body.slug, '/data.bin')).body, binary)
    })

    test('uploads follow the limits: as many files per call, each as large as a bundle file', async () => {
      const reserve = (server: TestServer, token: string, count: number, size: number) =>
        server.api('POST', '/v1/uploads', { token, body: { files: Array.from({ length: count }, (_, i) => ({ filename: `f${i}.bin`, size })) } })
      const user = await standard.user()
      assert.equal((await reserve(standard, user.token, 41, 10)).body.error.code, 'VALIDATION_FAILED')
      assert.equal((await reserve(standard, user.token, 1, 2 * MiB + 1)).body.error.code, 'VALIDATION_FAILED')
      const owner = await raised.user()
      const reserved = await reserve(raised, owner.token, 41, 13 * MiB)
      assert.equal(reserved.status, 201, reserved.text)
      assert.equal(reserved.body.uploads.length, 41)
    })

    test('GET /v1 states the limits each instance enforces', async () => {
      assert.deepEqual((await standard.api('GET', '/v1')).body.bundleLimits, { maxFiles: 40, maxFileBytes: 2 * MiB, maxBundleBytes: 8 * MiB, maxHtmlPages: 15 })
      assert.deepEqual((await raised.api('GET', '/v1')).body.bundleLimits, { maxFiles: 60, maxFileBytes: 13 * MiB, maxBundleBytes: 13 * MiB, maxHtmlPages: 20 })
    })

    test('the OpenAPI document states the limits each instance enforces', async () => {
      for (const [server, files, fileSize, bundleSize] of [
        [standard, 40, '2 MiB', '8 MiB'],
        [raised, 60, '13 MiB', '13 MiB'],
      ] as const) {
        const schemas = (await server.api('GET', '/openapi.json')).body.components.schemas
        for (const name of ['PublishWebsiteRequest', 'PublishVersionRequest']) {
          const field = schemas[name].properties.files
          assert.equal(field.maxItems, files, name)
          assert.match(field.description, new RegExp(`1 to ${files} files .* at most ${fileSize} each and ${bundleSize} in all`), name)
        }
        const importAsset = (await server.api('GET', '/openapi.json')).body.paths['/v1/websites/{websiteId}/assets'].post
        assert.match(importAsset.description, new RegExp(`${fileSize} at most`), 'images kept are as large as a bundle file')
        const uploads = schemas.CreateUploadsRequest.properties.files
        assert.equal(uploads.maxItems, files)
        assert.equal(uploads.items.properties.size.maximum, fileSize === '2 MiB' ? 2 * MiB : 13 * MiB)
      }
    })

    test('the MCP tools state the limits the instance enforces', async () => {
      const owner = await raised.user()
      const client = await connect(raised, owner.token, { toolsets: 'all' })
      try {
        const { tools } = await client.listTools()
        const tool = (name: string) => tools.find((t) => t.name === name)!
        for (const name of ['publish_website', 'publish_version']) assert.equal(tool(name).inputSchema.properties.files.maxItems, 60, name)
        // The files field is described once, in the tool that creates a site.
        assert.match(tool('publish_website').inputSchema.properties.files.description, /1 to 60 files .* at most 13 MiB each .* at most 20 HTML pages/)
        assert.match(tool('create_upload').description!, /up to 60 per call/)
        assert.equal(tool('create_upload').inputSchema.properties.files.items.properties.size.maximum, 13 * MiB)
        assert.match(tool('import_asset').description!, /at most 13 MiB/)
      } finally {
        await client.close()
      }
    })
  })
}
