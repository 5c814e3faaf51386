/**
 * The NUL character (U+0000), on every store: PostgreSQL's text cannot hold it, so before any
 * query a request carrying one is refused alike on both stores and over every surface. In a
 * path parameter it names nothing (404 NOT_FOUND); in a query parameter, a body field or a tool's
 * argument it is 422 VALIDATION_FAILED naming the field; on the dashboard, a form field holding
 * one gets a page saying so. Nothing changes. A bundle file's path and content keep their
 * authoring rules (INVALID_PATH, INVALID_ENCODING), which name the file.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { nulFieldOf } from '../../src/core/nul-characters.ts'
import { assertError, siteWithPreview } from '../helpers/factories.ts'
import { call, connect } from '../helpers/mcp.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { uniqueEmail, WebVisitor } from '../helpers/web.ts'

const NUL = 'a\u0000b'

test('nulFieldOf names the first field holding U+0000, and leaves a file’s path and content to the authoring rules', () => {
  assert.equal(nulFieldOf({ name: 'fine', fields: [{ label: 'ok' }, { label: NUL }] }), 'fields[1].label')
  assert.equal(nulFieldOf({ [NUL]: 1 }), 'a\\u0000b')
  assert.equal(nulFieldOf(NUL, 'arguments'), 'arguments')
  assert.equal(
    nulFieldOf({ files: [{ path: NUL, content: NUL }], changes: [{ op: 'move', from: NUL, to: NUL }], content: NUL, edits: [{ oldText: NUL }] }),
    null,
  )
  assert.equal(nulFieldOf({ files: [{ path: 'a', contentType: NUL }] }), 'files[0].contentType')
  assert.equal(nulFieldOf({ message: 'x', from: NUL }), 'from')
  assert.equal(nulFieldOf(Buffer.from(NUL)), null)
})

for (const store of STORES) {
  describe(`the NUL character in requests (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('REST: a body field or query parameter holding it is VALIDATION_FAILED naming it; a path parameter names nothing', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const w = `/v1/websites/${site.websiteId}`
      const refused: Array<[method: 'GET' | 'POST' | 'PUT', path: string, body: unknown, field: string]> = [
        ['POST', '/v1/websites', { name: NUL, category: 'other', files: bundle() }, 'name'],
        ['POST', `${w}/versions`, { message: NUL, files: bundle('Three') }, 'message'],
        ['POST', `${w}/versions/${preview.jobId}/promotion-request`, { note: NUL }, 'note'],
        ['POST', `${w}/drafts`, { baseVersion: NUL }, 'baseVersion'],
        ['POST', `${w}/webhooks`, { url: `https://hooks.example.com/${NUL}`, events: ['version.published'] }, 'url'],
        ['POST', `${w}/collections`, { name: 'posts', label: 'Posts', fields: [{ name: 'title', label: NUL, type: 'text' }] }, 'fields[0].label'],
        ['PUT', `${w}/password`, { password: `long enough ${NUL}` }, 'password'],
        ['GET', `/v1/slugs/suggest?value=${encodeURIComponent(NUL)}`, undefined, 'value'],
      ]
      for (const [method, path, body, field] of refused) {
        const res = await server.api(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) })
        assertError(res, 422, 'VALIDATION_FAILED')
        assert.deepEqual(res.body.error.fields, { [field]: 'must not contain the NUL character (U+0000)' }, `${method} ${path}`)
      }
      for (const path of [
        `/v1/websites/${encodeURIComponent(NUL)}`,
        `${w}/versions/${encodeURIComponent(NUL)}/files/index.html`,
        `${w}/drafts/drf_${encodeURIComponent(NUL)}`,
      ]) {
        assertError(await server.api('GET', path, { token: owner.token }), 404, 'NOT_FOUND', /NUL character/)
      }
      const sites = await server.api('GET', '/v1/websites', { token: owner.token })
      assert.deepEqual(
        sites.body.items.map((s: { id: string }) => s.id),
        [site.websiteId],
      )
      const versions = await server.api('GET', `${w}/versions`, { token: owner.token })
      assert.equal(versions.body.versions.length, 2)
      for (const kind of ['drafts', 'webhooks', 'collections']) {
        const listed = await server.api('GET', `${w}/${kind}`, { token: owner.token })
        assert.equal(listed.status, 200, listed.text)
        assert.deepEqual(listed.body.items, [], `no ${kind}`)
      }
    })

    test('the OpenAPI document lists these answers: 404 for every operation with a path parameter, 422 for every one with a body or a query', async () => {
      const doc = (await server.api('GET', '/openapi.json')).body
      let operations = 0
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) {
          const params: Array<{ in: string }> = op.parameters ?? []
          if (params.some((p) => p.in === 'path')) assert.ok(op.responses['404'], `${method} ${path} lists 404`)
          if (op.requestBody || params.some((p) => p.in === 'query')) assert.ok(op.responses['422'], `${method} ${path} lists 422`)
          operations++
        }
      }
      assert.ok(operations > 50, `${operations} operations`)
    })

    test('a bundle file’s path and content keep their authoring rules, and a draft file written at such a path is INVALID_PATH', async () => {
      const { owner, site } = await siteWithPreview(server)
      const w = `/v1/websites/${site.websiteId}`
      const published = await server.api('POST', `${w}/versions`, { token: owner.token, body: { files: [...bundle('Nul'), { path: NUL, content: 'x' }] } })
      assertError(published, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        published.body.error.violations.map((v: { code: string; path?: string }) => [v.code, v.path]),
        [['INVALID_PATH', NUL]],
      )
      const draft = await server.api('POST', `${w}/drafts`, { token: owner.token, body: {} })
      assert.equal(draft.status, 201, draft.text)
      const files = `${w}/drafts/${draft.body.draftId}/files`
      const written = await server.api('PUT', `${files}/${encodeURIComponent(NUL)}`, { token: owner.token, body: { content: 'x' } })
      assertError(written, 422, 'PUBLISH_INVALID')
      assert.equal(written.body.error.violations[0].code, 'INVALID_PATH')
      assertError(await server.api('GET', `${files}/${encodeURIComponent(NUL)}`, { token: owner.token }), 404, 'NOT_FOUND', /NUL character/)
      const moved = await server.api('POST', `${w}/drafts/${draft.body.draftId}/moves`, { token: owner.token, body: { from: NUL, to: 'b.html' } })
      assertError(moved, 422, 'VALIDATION_FAILED')
      assert.deepEqual(Object.keys(moved.body.error.fields), ['from'])
    })

    test('MCP: an argument holding it is VALIDATION_FAILED naming it, with the v2 and the SDK 1.x client', async () => {
      const { owner, site } = await siteWithPreview(server)
      for (const kind of ['v2', 'sdk1'] as const) {
        const client = await connect(server, owner.token, { client: kind })
        try {
          for (const [tool, args, field] of [
            ['read_file', { websiteId: site.websiteId, versionId: NUL, path: 'index.html' }, 'versionId'],
            ['start_draft', { websiteId: site.websiteId, baseVersion: NUL }, 'baseVersion'],
            ['publish_version', { websiteId: site.websiteId, message: NUL, files: bundle('Four') }, 'message'],
          ] as const) {
            const result = await call(client, tool, args)
            assert.equal(result.isError, true, `${kind} ${tool}`)
            assert.equal(result.data.error.code, 'VALIDATION_FAILED')
            assert.deepEqual(Object.keys(result.data.error.fields), [field], `${kind} ${tool}`)
          }
        } finally {
          await client.close()
        }
      }
      const versions = await server.api('GET', `/v1/websites/${site.websiteId}/versions`, { token: owner.token })
      assert.equal(versions.body.versions.length, 2)
    })

    test('the dashboard: a form field holding it gets a page that says so, and nothing is made', async () => {
      const visitor = new WebVisitor(server)
      const email = uniqueEmail('nul')
      assert.equal((await visitor.signUp(email)).status, 303)
      const page = await visitor.submit('/mcp', '/mcp/tokens', { name: NUL, access: 'both', expires: '0' })
      assert.equal(page.status, 422)
      assert.match(page.text, /name must not contain the NUL character \(U\+0000\)/)
      const tokens = await visitor.get('/mcp')
      assert.doesNotMatch(tokens.text, /a\u0000b|a�b/)
    })
  })
}
