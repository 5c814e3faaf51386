/**
 * Every publish answers the site check's warnings (an empty list when clean) and never refuses
 * for them; the version keeps them, on both stores and across a restart, and every view of a
 * version shows them: REST (createWebsite, createWebsiteVersion with files or a patch, a draft's
 * publish, getWebsite, listWebsiteVersions, a promotion), MCP with the SDK 1.x and v2 clients
 * (which check each result against the tool's outputSchema), and the dashboard's version page.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Warning } from '../../src/core/schemas.ts'
import { CLIENTS, call, connect } from '../helpers/mcp.ts'
import { startOnStore, startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'
import { page } from '../helpers/site-check.ts'
import { STORES } from '../helpers/stores.ts'
import { WebVisitor } from '../helpers/web.ts'

/** A site the check finds one thing in: an image without alt text, on line 2 of index.html. */
const withWarning = () => [
  page('index.html', '<h1>Home</h1>\n<img src="logo.svg">'),
  { path: 'logo.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"></svg>' },
]
const clean = () => [
  page('index.html', '<h1>Home</h1>\n<img src="logo.svg" alt="Logo">'),
  { path: 'logo.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"></svg>' },
]
const MISSING_ALT: Warning = {
  code: 'MISSING_ALT',
  path: 'index.html',
  line: 2,
  message: 'index.html shows "logo.svg" without alt text: add alt="what it shows" (alt="" for a decorative image).',
}
const sorted = (warning: Warning) => Object.fromEntries(Object.entries(warning).sort(([a], [b]) => a.localeCompare(b)))
const same = (actual: Warning[], expected: Warning[], what: string) => assert.deepEqual(actual.map(sorted), expected.map(sorted), what)

for (const store of STORES) {
  describe(`site check warnings kept per version (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let user: Awaited<ReturnType<TestServer['user']>>
    before(async () => {
      server = await startTestServer(store.name)
      user = await server.user()
    })
    after(() => server?.close())

    const api = (method: string, path: string, body?: unknown) => server.api(method, path, { token: user.token, body })

    test('REST: every publish answers its warnings, the versions keep them, and a restart reads them back', async () => {
      const created = await api('POST', '/v1/websites', { category: 'other', files: withWarning() })
      assert.equal(created.status, 201, created.text)
      same(created.body.warnings, [MISSING_ALT], 'createWebsite')
      const { websiteId } = created.body
      const v2 = await api('POST', `/v1/websites/${websiteId}/versions`, { files: clean(), promote: false })
      assert.equal(v2.status, 201, v2.text)
      assert.deepEqual(v2.body.warnings, [], 'createWebsiteVersion: clean, an empty list')
      const patched = await api('POST', `/v1/websites/${websiteId}/versions`, {
        baseVersion: 2,
        changes: [{ op: 'edit', path: 'index.html', edits: [{ oldText: '<h1>Home</h1>', newText: '<h1>Home</h1><a href="menu.html">Menu</a>' }] }],
      })
      assert.equal(patched.status, 201, patched.text)
      same(
        patched.body.warnings.map((w: Warning) => ({ ...w, message: '' })),
        [{ code: 'BROKEN_LINK', path: 'index.html', line: 1, message: '' }],
        'a patch',
      )

      const draft = await api('POST', `/v1/websites/${websiteId}/drafts`, {})
      assert.equal(draft.status, 201, draft.text)
      const draftPath = `/v1/websites/${websiteId}/drafts/${draft.body.draftId}`
      const written = await api('PUT', `${draftPath}/files/index.html`, { content: withWarning()[0]!.content })
      assert.ok(written.status === 200 || written.status === 201, written.text)
      const published = await api('POST', `${draftPath}/publish`, {})
      assert.equal(published.status, 201, published.text)
      same(published.body.warnings, [MISSING_ALT], "a draft's publish")

      const expected = { 1: [MISSING_ALT], 2: [], 4: [MISSING_ALT] } as Record<number, Warning[]>
      const check = async (on: TestServer, when: string) => {
        const site = await on.api('GET', `/v1/websites/${websiteId}`, { token: user.token })
        const listed = await on.api('GET', `/v1/websites/${websiteId}/versions`, { token: user.token })
        for (const versions of [site.body.versions, listed.body.versions]) {
          for (const [number, warnings] of Object.entries(expected))
            same(versions.find((v: { version: number }) => v.version === Number(number)).warnings, warnings, `v${number} ${when}`)
          assert.equal(versions.find((v: { version: number }) => v.version === 3).warnings[0].code, 'BROKEN_LINK')
        }
        same(site.body.currentVersion.warnings, [MISSING_ALT], `the current version ${when}`)
      }
      await check(server, 'as published')
      // A second server on the same store, as after a restart.
      const restarted = await startOnStore({ ...server.store, dispose: async () => {} }, server.config)
      try {
        await check(restarted, 'after a restart')
        const promoted = await restarted.api('POST', `/v1/websites/${websiteId}/versions/2/promote`, { token: user.token, body: {} })
        assert.equal(promoted.status, 200, promoted.text)
        assert.deepEqual(promoted.body.warnings, [], 'a promotion answers the Version, warnings included')
      } finally {
        await restarted.close()
      }
    })

    test('warnings never refuse a publish: a bundle with many of them publishes, and its version serves', async () => {
      const files = [
        { path: 'index.html', content: '<p><a href="a">a</a><a href="#b">b</a><img src="c.png"><p id=d><p id=d>' },
        { path: 'unused.css', content: 'p{}' },
      ]
      const created = await api('POST', '/v1/websites', { category: 'other', files })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual([...new Set(created.body.warnings.map((w: Warning) => w.code))].sort(), [
        'BROKEN_LINK',
        'DUPLICATE_ID',
        'MISSING_ALT',
        'MISSING_ANCHOR',
        'MISSING_LANG',
        'MISSING_TITLE',
        'MISSING_VIEWPORT',
        'UNUSED_FILE',
      ])
      assert.equal((await server.site(created.body.slug, '/')).status, 200)
    })

    for (const kind of CLIENTS) {
      test(`MCP (${kind} client): publish_website, publish_version, publish_draft, get_website, list_versions and promote_version carry warnings`, async () => {
        const client = await connect(server, user.token, { client: kind })
        try {
          const ok = async (name: string, args: Record<string, unknown>) => {
            const result = await call(client, name, args)
            assert.equal(result.isError, false, `${name}: ${JSON.stringify(result.data)}`)
            return result.data
          }
          const created = await ok('publish_website', { category: 'other', files: withWarning() })
          same(created.warnings, [MISSING_ALT], 'publish_website')
          const { websiteId } = created
          assert.deepEqual((await ok('publish_version', { websiteId, files: clean() })).warnings, [], 'publish_version, clean')
          const draft = await ok('start_draft', { websiteId })
          await ok('write_file', { websiteId, draftId: draft.draftId, path: 'index.html', content: withWarning()[0]!.content })
          same((await ok('publish_draft', { websiteId, draftId: draft.draftId, promote: false })).warnings, [MISSING_ALT], 'publish_draft')
          const site = await ok('get_website', { websiteId })
          same(site.versions.find((v: { version: number }) => v.version === 1).warnings, [MISSING_ALT], 'get_website')
          assert.deepEqual(site.currentVersion.warnings, [], 'get_website: the current version, clean')
          const listed = await ok('list_versions', { websiteId })
          same(listed.versions.find((v: { version: number }) => v.version === 3).warnings, [MISSING_ALT], 'list_versions')
          same((await ok('promote_version', { websiteId, versionId: '3' })).warnings, [MISSING_ALT], 'promote_version')
        } finally {
          await client.close()
        }
      })
    }

    test("the dashboard's version page lists the version's warnings, or says it found nothing", async () => {
      const created = await api('POST', '/v1/websites', { category: 'other', files: withWarning() })
      await api('POST', `/v1/websites/${created.body.websiteId}/versions`, { files: clean() })
      const visitor = new WebVisitor(server)
      const signedIn = await visitor.signIn(user.email, TEST_PASSWORD)
      assert.ok(signedIn.status < 400, `signed in (${signedIn.status})`)
      const first = await visitor.get(`/dashboard/sites/${created.body.websiteId}/versions/1`)
      assert.equal(first.status, 200)
      assert.match(first.text, /<h2 id="warnings-title">Site check<\/h2>/)
      assert.match(first.text, /found 1 thing to look at in v1; none of them stopped its publish/)
      assert.match(
        first.text,
        /<code>MISSING_ALT<\/code> <code>index\.html:2<\/code> <span class="muted">index\.html shows &#34;logo\.svg&#34; without alt text/,
      )
      const second = await visitor.get(`/dashboard/sites/${created.body.websiteId}/versions/2`)
      assert.match(second.text, /The site check found nothing to fix in v2\./)
    })
  })
}
