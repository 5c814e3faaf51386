/**
 * Drafts over real HTTP: starting one from the live version or another, listing, reading and
 * discarding, the preview address, the limit of open drafts per site, and who may work on them
 * (owners and editors; a stranger finds no site and no draft).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DRAFTS_PER_SITE } from '../../src/core/limits.ts'
import { draftLabel, parseDraftLabel, parseSiteLabel } from '../../src/core/site-address.ts'
import { assertError, createVersion, siteWithMembers, type TestUser } from '../helpers/factories.ts'
import { bundle, SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

for (const store of STORES) {
  describe(`drafts (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    const draftsOf = (websiteId: string) => `/v1/websites/${websiteId}/drafts`

    async function startDraft(user: Pick<TestUser, 'token'>, websiteId: string, body?: unknown) {
      const res = await server.api('POST', draftsOf(websiteId), { token: user.token, ...(body === undefined ? {} : { body }) })
      assert.equal(res.status, 201, res.text)
      return res.body
    }

    test('a draft starts from the live version: 201 with its id, base, preview address, expiry and files, all unchanged', async () => {
      const { site, owner } = await siteWithMembers(server)
      await createVersion(server, owner, site.websiteId, { files: bundle('Second'), promote: false })
      const draft = await startDraft(owner, site.websiteId)
      assert.match(draft.draftId, /^drf_[a-z0-9]{10}$/)
      assert.equal(draft.websiteId, site.websiteId)
      assert.equal(draft.baseVersion, 1, 'the live version, not the newest')
      assert.equal(draft.baseVersionId, site.jobId)
      assert.equal(draft.previewUrl, `http://${site.slug}--d${draft.draftId.slice(4)}.${SITE_DOMAIN}/`)
      assert.equal(draft.createdAt, draft.updatedAt)
      const days = (Date.parse(draft.expiresAt) - Date.parse(draft.updatedAt)) / 86_400_000
      assert.equal(days, 7, 'PLINTH_DRAFT_TTL_DAYS defaults to 7')
      const versions = await server.api('GET', `/v1/websites/${site.websiteId}/versions`, { token: owner.token })
      const v1 = versions.body.versions.find((v: { version: number }) => v.version === 1)
      assert.deepEqual(
        draft.files,
        v1.files
          .map((f: { originalName: string; size: number; sha256: string; contentType: string }) => ({
            path: f.originalName,
            size: f.size,
            sha256: f.sha256,
            contentType: f.contentType,
            change: 'unchanged',
          }))
          .sort((a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1)),
      )
    })

    test('baseVersion names another version by number or by id; an unknown one is 404; a body is optional', async () => {
      const { site, owner } = await siteWithMembers(server)
      const second = await createVersion(server, owner, site.websiteId, { files: bundle('Second', [{ path: 'extra.css', content: 'p{}' }]) })
      const byNumber = await startDraft(owner, site.websiteId, { baseVersion: 1 })
      assert.equal(byNumber.baseVersion, 1)
      assert.deepEqual(
        byNumber.files.map((f: { path: string }) => f.path),
        ['index.html', 'style.css'],
      )
      const byId = await startDraft(owner, site.websiteId, { baseVersion: second.jobId })
      assert.equal(byId.baseVersion, 2)
      assert.deepEqual(
        byId.files.map((f: { path: string }) => f.path),
        ['extra.css', 'index.html', 'style.css'],
      )
      const byDigits = await startDraft(owner, site.websiteId, { baseVersion: '1' })
      assert.equal(byDigits.baseVersion, 1)
      for (const baseVersion of [9, 'job_unknown']) {
        assertError(await server.api('POST', draftsOf(site.websiteId), { token: owner.token, body: { baseVersion } }), 404, 'NOT_FOUND')
      }
      const wrong = await server.api('POST', draftsOf(site.websiteId), { token: owner.token, body: { baseVersion: 1, extra: true } })
      assertError(wrong, 422, 'VALIDATION_FAILED')
      assert.ok('extra' in wrong.body.error.fields)
    })

    test('list, get and discard: discarding answers 204, and the draft is then gone', async () => {
      const { site, owner } = await siteWithMembers(server)
      const first = await startDraft(owner, site.websiteId)
      const second = await startDraft(owner, site.websiteId)
      const list = await server.api('GET', draftsOf(site.websiteId), { token: owner.token })
      assert.equal(list.status, 200)
      assert.deepEqual(
        list.body.items.map((d: { draftId: string }) => d.draftId),
        [first.draftId, second.draftId],
        'oldest first',
      )
      assert.equal(list.body.items[0].files, undefined, 'a listing has no files')
      const got = await server.api('GET', `${draftsOf(site.websiteId)}/${first.draftId}`, { token: owner.token })
      assert.equal(got.status, 200)
      assert.deepEqual(got.body, first)

      const discarded = await server.api('DELETE', `${draftsOf(site.websiteId)}/${first.draftId}`, { token: owner.token })
      assert.equal(discarded.status, 204)
      assert.equal(discarded.text, '')
      assertError(await server.api('GET', `${draftsOf(site.websiteId)}/${first.draftId}`, { token: owner.token }), 404, 'NOT_FOUND')
      assertError(await server.api('DELETE', `${draftsOf(site.websiteId)}/${first.draftId}`, { token: owner.token }), 404, 'NOT_FOUND')
      const after = await server.api('GET', draftsOf(site.websiteId), { token: owner.token })
      assert.deepEqual(
        after.body.items.map((d: { draftId: string }) => d.draftId),
        [second.draftId],
      )
      // A draft is found under its own site only.
      const other = await siteWithMembers(server)
      assertError(await server.api('GET', `${draftsOf(other.site.websiteId)}/${second.draftId}`, { token: other.owner.token }), 404, 'NOT_FOUND')
    })

    test(`a site has at most ${DRAFTS_PER_SITE} open drafts: one more is 403 DRAFT_LIMIT_REACHED, and discarding frees a slot`, async () => {
      const { site, owner, editor } = await siteWithMembers(server)
      const drafts = await Promise.all(Array.from({ length: DRAFTS_PER_SITE }, (_, i) => startDraft(i % 2 ? editor : owner, site.websiteId)))
      const refused = await server.api('POST', draftsOf(site.websiteId), { token: owner.token })
      assertError(refused, 403, 'DRAFT_LIMIT_REACHED', new RegExp(`${DRAFTS_PER_SITE} open drafts`))
      // The refusal names every open draft, so a caller that lost their ids can discard one.
      for (const draft of drafts) assert.match(refused.body.error.message, new RegExp(`${draft.draftId} \\(from version 1, last written `))
      // Another site's drafts are counted apart.
      const other = await siteWithMembers(server)
      await startDraft(other.owner, other.site.websiteId)
      assert.equal((await server.api('DELETE', `${draftsOf(site.websiteId)}/${drafts[0].draftId}`, { token: owner.token })).status, 204)
      await startDraft(owner, site.websiteId)
    })

    test('a client that sends Content-Type: application/json with no body starts and discards drafts; a stranger still gets 404', async () => {
      const { site, owner, stranger } = await siteWithMembers(server)
      const json = { 'content-type': 'application/json' }
      const started = await server.api('POST', draftsOf(site.websiteId), { token: owner.token, body: '', headers: json })
      assert.equal(started.status, 201, started.text)
      const draft = `${draftsOf(site.websiteId)}/${started.body.draftId}`
      assertError(await server.api('DELETE', draft, { token: stranger.token, body: '', headers: json }), 404, 'NOT_FOUND')
      assert.equal((await server.api('DELETE', `${draft}/files/index.html`, { token: owner.token, body: '', headers: json })).status, 204)
      assert.equal((await server.api('DELETE', draft, { token: owner.token, body: '', headers: json })).status, 204)
    })

    test('concurrent creates never pass the limit', async () => {
      const { site, owner } = await siteWithMembers(server)
      const results = await Promise.all(Array.from({ length: DRAFTS_PER_SITE + 3 }, () => server.api('POST', draftsOf(site.websiteId), { token: owner.token })))
      assert.equal(results.filter((r) => r.status === 201).length, DRAFTS_PER_SITE)
      for (const refused of results.filter((r) => r.status !== 201)) assertError(refused, 403, 'DRAFT_LIMIT_REACHED')
    })

    test('an editor works on drafts like the owner; a stranger gets 404 from every draft operation and changes nothing', async () => {
      const { site, owner, editor, stranger } = await siteWithMembers(server)
      const draft = await startDraft(editor, site.websiteId)
      const base = `${draftsOf(site.websiteId)}/${draft.draftId}`
      const calls: Array<[string, string, unknown?]> = [
        ['POST', draftsOf(site.websiteId), {}],
        ['GET', draftsOf(site.websiteId)],
        ['GET', base],
        ['DELETE', base],
        ['POST', `${base}/publish`, {}],
        ['POST', `${base}/moves`, { from: 'style.css', to: 'site.css' }],
        ['GET', `${base}/files/index.html`],
        ['PUT', `${base}/files/new.css`, { content: 'p{}' }],
        ['PATCH', `${base}/files/style.css`, { edits: [{ oldText: 'sans-serif', newText: 'serif' }] }],
        ['DELETE', `${base}/files/style.css`],
      ]
      for (const [method, path, body] of calls) {
        const res = await server.api(method, path, { token: stranger.token, ...(body === undefined ? {} : { body }) })
        assertError(res, 404, 'NOT_FOUND')
        assert.match(res.body.error.message, /^Website not found/, `${method} ${path}`)
      }
      const unchanged = await server.api('GET', base, { token: owner.token })
      assert.deepEqual(unchanged.body, draft, 'the stranger changed nothing')
      const edited = await server.api('PATCH', `${base}/files/style.css`, {
        token: owner.token,
        body: { edits: [{ oldText: 'sans-serif', newText: 'serif' }] },
      })
      assert.equal(edited.status, 200, edited.text)
      assert.equal((await server.api('DELETE', base, { token: editor.token })).status, 204)
      assertError(await server.api('GET', draftsOf(site.websiteId), { token: undefined }), 401, 'AUTH_REQUIRED')
    })

    test("the preview label cannot be a slug's: it carries --d, parses back to the slug and the draft id, and fits a DNS label", async () => {
      const { site, owner } = await siteWithMembers(server)
      const draft = await startDraft(owner, site.websiteId)
      const label = draftLabel(site.slug, draft.draftId)
      assert.equal(new URL(draft.previewUrl).hostname, `${label}.${SITE_DOMAIN.split(':')[0]}`)
      assert.deepEqual(parseDraftLabel(label), { slug: site.slug, draftId: draft.draftId })
      assert.equal(parseSiteLabel(label), null, 'not a live or version address')
      assert.equal(parseDraftLabel(site.slug), null)
      assert.equal(parseDraftLabel(`${site.slug}--v2`), null)
      assert.equal(parseDraftLabel(`${site.slug}--dABC`), null, 'hosts are compared lowercase: an uppercase token names nothing')
      const longest = draftLabel('a'.repeat(50), draft.draftId)
      assert.ok(longest.length <= 63, `${longest.length} characters`)
    })
  })
}
