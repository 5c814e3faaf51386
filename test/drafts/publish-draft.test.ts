/**
 * Publishing a draft over real HTTP: the draft's files become the site's next version, byte for
 * byte what the same site sent whole would be, and the draft is gone; a version newer than its
 * base is VERSION_CONFLICT unless overwrite; a draft that breaks a rule of a whole bundle is
 * refused and kept.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createSite, createUser, createVersion, PNG_BASE64, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string) =>
  `<!doctype html><html><head><title>${title}</title><link rel="stylesheet" href="css/site.css"></head><body><h1>${title}</h1></body></html>`

interface VersionFile {
  originalName: string
  sha256: string
  size: number
  contentType: string
}

for (const store of STORES) {
  describe(`publishing a draft (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    async function versionsOf(user: Pick<TestUser, 'token'>, websiteId: string) {
      const res = await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: user.token })
      assert.equal(res.status, 200, res.text)
      return res.body.versions as Array<{ version: number; isCurrent: boolean; instruction?: string; files: VersionFile[] }>
    }

    const filesOf = (files: VersionFile[]) =>
      files.map((f) => ({ path: f.originalName, sha256: f.sha256, size: f.size, contentType: f.contentType })).sort((a, b) => (a.path < b.path ? -1 : 1))

    async function startDraft(user: Pick<TestUser, 'token'>, websiteId: string) {
      const created = await server.api('POST', `/v1/websites/${websiteId}/drafts`, { token: user.token })
      assert.equal(created.status, 201, created.text)
      const base = `/v1/websites/${websiteId}/drafts/${created.body.draftId}`
      const call = (method: string, suffix: string, body?: unknown) =>
        server.api(method, base + suffix, { token: user.token, ...(body === undefined ? {} : { body }) })
      return { draftId: created.body.draftId as string, base, call }
    }

    test('a published draft is the next version, identical to the same site sent whole; the draft is then gone', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, {
        owner,
        files: [
          { path: 'index.html', content: page('Home').replace('css/site.css', 'style.css') },
          { path: 'style.css', content: 'body { color: #222; }' },
          { path: 'old.html', content: page('Old') },
        ],
      })
      const draft = await startDraft(owner, site.websiteId)
      const steps = [
        await draft.call('POST', '/moves', { from: 'style.css', to: 'css/site.css' }),
        await draft.call('PATCH', '/files/index.html', { edits: [{ oldText: 'href="style.css"', newText: 'href="css/site.css"' }] }),
        await draft.call('PUT', '/files/about.html', { content: page('About') }),
        await draft.call('PUT', '/files/img/dot.png', { content: PNG_BASE64, contentEncoding: 'base64' }),
        await draft.call('DELETE', '/files/old.html'),
      ]
      for (const step of steps) assert.ok([200, 201, 204].includes(step.status), step.text)

      const published = await draft.call('POST', '/publish', { message: 'Moved the stylesheet, added About' })
      assert.equal(published.status, 201, published.text)
      assert.deepEqual(
        { version: published.body.version, isCurrent: published.body.isCurrent, websiteId: published.body.websiteId },
        { version: 2, isCurrent: true, websiteId: site.websiteId },
      )
      assert.match(published.body.previewUrl, /--v2\./)
      assert.match(published.headers.get('ratelimit-policy') ?? '', /^"publish"/, 'the publish rate limit is reported')
      assertError(await draft.call('GET', ''), 404, 'NOT_FOUND')

      // The same site, sent whole.
      const whole = await createVersion(server, owner, site.websiteId, {
        files: [
          { path: 'index.html', content: page('Home') },
          { path: 'css/site.css', content: 'body { color: #222; }' },
          { path: 'about.html', content: page('About') },
          { path: 'img/dot.png', content: PNG_BASE64, contentEncoding: 'base64' },
        ],
      })
      const versions = await versionsOf(owner, site.websiteId)
      const fromDraft = versions.find((v) => v.version === 2)!
      const sentWhole = versions.find((v) => v.version === whole.version)!
      assert.equal(fromDraft.instruction, 'Moved the stylesheet, added About')
      assert.deepEqual(filesOf(fromDraft.files), filesOf(sentWhole.files))
      const live = await server.site(site.slug, '/css/site.css')
      assert.equal(live.status, 200)
      assert.equal(live.body.toString(), 'body { color: #222; }')
    })

    test('promote false stores the version for review; the live version stays', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const draft = await startDraft(owner, site.websiteId)
      await draft.call('PUT', '/files/extra.css', { content: 'p { margin: 0; }' })
      const published = await draft.call('POST', '/publish', { promote: false })
      assert.equal(published.status, 201, published.text)
      assert.equal(published.body.isCurrent, false)
      const versions = await versionsOf(owner, site.websiteId)
      assert.deepEqual(
        versions.map((v) => [v.version, v.isCurrent]),
        [
          [2, false],
          [1, true],
        ],
      )
    })

    test('a newer version than the base is 409 VERSION_CONFLICT naming it, and the draft stays; overwrite publishes anyway', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const draft = await startDraft(owner, site.websiteId)
      await draft.call('PUT', '/files/about.html', { content: page('About') })
      await createVersion(server, owner, site.websiteId, { files: [{ path: 'index.html', content: page('Elsewhere') }] })
      const refused = await draft.call('POST', '/publish', {})
      assertError(refused, 409, 'VERSION_CONFLICT', /^Version 1 is not the newest: version 2 was published since, changing index\.html, style\.css\./)
      assert.match(refused.body.error.fields.baseVersion, /^2 is the newest version/)
      assert.equal((await versionsOf(owner, site.websiteId)).length, 2, 'nothing was published')
      assert.equal((await draft.call('GET', '')).status, 200, 'the draft is kept')

      const overwritten = await draft.call('POST', '/publish', { overwrite: true })
      assert.equal(overwritten.status, 201, overwritten.text)
      assert.equal(overwritten.body.version, 3)
      const [newest] = await versionsOf(owner, site.websiteId)
      assert.deepEqual(newest!.files.map((f) => f.originalName).sort(), ['about.html', 'index.html', 'style.css'])
    })

    test('a draft that breaks a rule of a whole bundle is refused with PUBLISH_INVALID and kept', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const draft = await startDraft(owner, site.websiteId)
      assert.equal((await draft.call('DELETE', '/files/index.html')).status, 204)
      const refused = await draft.call('POST', '/publish')
      assertError(refused, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        refused.body.error.violations.map((v: { code: string }) => v.code),
        ['MISSING_INDEX'],
      )
      assert.equal((await draft.call('GET', '')).status, 200)
      assert.equal((await versionsOf(owner, site.websiteId)).length, 1)
    })

    test('an editor publishes a draft; unknown publish fields are 422', async () => {
      const owner = await createUser(server)
      const editor = await createUser(server)
      const site = await createSite(server, { owner })
      await server.server.services.members.share(site.websiteId, editor.email, 'editor')
      const draft = await startDraft(editor, site.websiteId)
      assertError(await draft.call('POST', '/publish', { promote: 'yes' }), 422, 'VALIDATION_FAILED')
      assertError(await draft.call('POST', '/publish', { files: [] }), 422, 'VALIDATION_FAILED')
      const published = await draft.call('POST', '/publish', {})
      assert.equal(published.status, 201, published.text)
    })
  })
}
