/**
 * Tokens limited to some capabilities and some sites, over REST on every store: each capability
 * allows its operations and nothing else (403 TOKEN_NOT_ALLOWED naming what is missing), a site
 * outside a token's sites is 404 as for a stranger (listings leave it out, and a site-limited
 * token cannot create one), unscoped tokens keep today's behaviour, and a scope naming an unknown
 * capability or a site that is not the person's creates nothing.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { assertError, createSite, createToken, createUser, type TestUser } from '../helpers/factories.ts'
import { bundle, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const sharedServer = sharedTestServers()

function assertRefused(res: { status: number; text: string; body?: any }, capability: RegExp): void {
  assertError(res as never, 403, 'TOKEN_NOT_ALLOWED', capability)
  assert.match(String(res.body.error.details.missingCapability), capability)
}

for (const store of STORES) {
  describe(`token scopes over REST (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: TestUser
    let siteA: string
    let siteB: string
    const token = async (capabilities: string[], sites?: string[]) => (await createToken(server, owner, { capabilities, sites })).token

    before(async () => {
      server = await sharedServer(store.name)
      owner = await createUser(server)
      siteA = (await createSite(server, { owner, name: 'Site A' })).websiteId
      siteB = (await createSite(server, { owner, name: 'Site B' })).websiteId
    })

    test('an unscoped token keeps doing everything, as before', async () => {
      const res = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: owner.token, body: { files: bundle('Unscoped') } })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.isCurrent, true)
    })

    test('read: reads sites and versions, and is refused a publish, naming preview', async () => {
      const read = await token(['read'])
      assert.equal((await server.api('GET', `/v1/websites/${siteA}`, { token: read })).status, 200)
      assert.equal((await server.api('GET', `/v1/websites/${siteA}/versions`, { token: read })).status, 200)
      const publish = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: read, body: { files: bundle(), promote: false } })
      assertRefused(publish, /preview/)
      assert.match(publish.body.error.message, /has read/)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/drafts`, { token: read }), /preview/)
    })

    test('preview: publishes versions that do not go live and drafts, never what is live', async () => {
      const preview = await token(['preview'])
      const stored = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: preview, body: { files: bundle('Preview'), promote: false } })
      assert.equal(stored.status, 201, stored.text)
      assert.equal(stored.body.isCurrent, false)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/versions`, { token: preview, body: { files: bundle('Live') } }), /promote/)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/versions/${stored.body.jobId}/promote`, { token: preview }), /promote/)
      const draft = await server.api('POST', `/v1/websites/${siteA}/drafts`, { token: preview })
      assert.equal(draft.status, 201, draft.text)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/drafts/${draft.body.draftId}/publish`, { token: preview, body: {} }), /promote/)
      const published = await server.api('POST', `/v1/websites/${siteA}/drafts/${draft.body.draftId}/publish`, {
        token: preview,
        body: { promote: false, overwrite: true },
      })
      assert.equal(published.status, 201, published.text)
      assert.equal(published.body.isCurrent, false)
      // An edit that misses names the closest line by its number only: a preview token cannot read.
      const next = await server.api('POST', `/v1/websites/${siteA}/drafts`, { token: preview })
      const edits = { edits: [{ oldText: '<h1>Nowhere here</h1>', newText: 'x' }] }
      const missed = await server.api('PATCH', `/v1/websites/${siteA}/drafts/${next.body.draftId}/files/index.html`, { token: preview, body: edits })
      assert.equal(missed.body.error.code, 'EDIT_NO_MATCH', missed.text)
      assert.match(missed.body.error.message, /the closest line is 1 \(its text is shown to tokens that may read\)/)
      assert.doesNotMatch(missed.text, /doctype/)
      const patched = await server.api('POST', `/v1/websites/${siteA}/versions`, {
        token: preview,
        body: { baseVersion: published.body.version, promote: false, changes: [{ op: 'edit', path: 'index.html', ...edits }] },
      })
      assert.equal(patched.body.error.code, 'EDIT_NO_MATCH', patched.text)
      assert.doesNotMatch(patched.text, /doctype/)
      const unscoped = await server.api('POST', `/v1/websites/${siteA}/versions`, {
        token: owner.token,
        body: { baseVersion: published.body.version, promote: false, changes: [{ op: 'edit', path: 'index.html', ...edits }] },
      })
      assert.match(unscoped.body.error.message, /the closest line is 1: "<!doctype html>/, 'a token that may read is shown the line')
      // A new website goes live at once: a preview token cannot make one.
      assertRefused(await server.api('POST', '/v1/websites', { token: preview, body: { category: 'other', files: bundle() } }), /promote/)
      assertRefused(await server.api('GET', `/v1/websites/${siteA}`, { token: preview }), /read/)
    })

    test('promote: publishes live, promotes and rolls back, and creates websites', async () => {
      const promote = await token(['promote'])
      const live = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: promote, body: { files: bundle('Promoted') } })
      assert.equal(live.status, 201, live.text)
      assert.equal(live.body.isCurrent, true)
      const back = await server.api('POST', `/v1/websites/${siteA}/versions/${live.body.jobId}/promote`, { token: promote })
      assert.equal(back.status, 200, back.text)
      const created = await server.api('POST', '/v1/websites', { token: promote, body: { category: 'other', files: bundle() } })
      assert.equal(created.status, 201, created.text)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/versions`, { token: promote, body: { files: bundle(), promote: false } }), /preview/)
    })

    test('content: writes collections, and nothing else', async () => {
      const content = await token(['content'])
      const created = await server.api('POST', `/v1/websites/${siteA}/collections`, { token: content, body: { name: 'posts', label: 'Posts', fields: [] } })
      assert.equal(created.status, 201, created.text)
      assertRefused(await server.api('PUT', `/v1/websites/${siteA}/password`, { token: content, body: { password: 'long enough secret' } }), /manage/)
      assertRefused(await server.api('GET', `/v1/websites/${siteA}/forms`, { token: content }), /forms/)
    })

    test('forms: reads submissions, and nothing else', async () => {
      const forms = await token(['forms'])
      assert.equal((await server.api('GET', `/v1/websites/${siteA}/forms`, { token: forms })).status, 200)
      assertRefused(await server.api('GET', `/v1/websites/${siteA}`, { token: forms }), /read/)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/collections`, { token: forms, body: { name: 'x', label: 'X', fields: [] } }), /content/)
    })

    test('manage: password, webhooks and deletion, and not content', async () => {
      const manage = await token(['manage'])
      const doomed = await createSite(server, { owner })
      assert.equal((await server.api('PUT', `/v1/websites/${siteA}/password`, { token: manage, body: { password: 'long enough secret' } })).status, 204)
      assert.equal((await server.api('DELETE', `/v1/websites/${siteA}/password`, { token: manage })).status, 204)
      assert.equal((await server.api('GET', `/v1/websites/${siteA}/webhooks`, { token: manage })).status, 200)
      assert.equal((await server.api('DELETE', `/v1/websites/${doomed.websiteId}`, { token: manage })).status, 204)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/collections`, { token: manage, body: { name: 'y', label: 'Y', fields: [] } }), /content/)
      assertRefused(await server.api('POST', `/v1/websites/${siteA}/versions`, { token: manage, body: { files: bundle() } }), /promote/)
    })

    test('a capability refused is refused before the body is read or checked', async () => {
      const read = await token(['read'])
      const res = await server.api('POST', `/v1/websites/${siteA}/collections`, { token: read, body: { nonsense: true } })
      assertRefused(res, /content/)
    })

    test('sites: a site outside the token is 404 as for a stranger, and listings leave it out', async () => {
      const limited = await token([], [siteA])
      const list = await server.api('GET', '/v1/websites', { token: limited })
      assert.equal(list.status, 200)
      assert.deepEqual(
        list.body.items.map((item: { id: string }) => item.id),
        [siteA],
      )
      assert.equal((await server.api('GET', `/v1/websites/${siteA}`, { token: limited })).status, 200)
      const stranger = await createUser(server)
      const asStranger = await server.api('GET', `/v1/websites/${siteB}`, { token: stranger.token })
      const outside = await server.api('GET', `/v1/websites/${siteB}`, { token: limited })
      assertError(outside, 404, 'NOT_FOUND')
      assert.deepEqual(outside.body, asStranger.body)
      assertError(await server.api('POST', `/v1/websites/${siteB}/versions`, { token: limited, body: { files: bundle() } }), 404, 'NOT_FOUND')
      const jobOfB = (await server.api('GET', `/v1/websites/${siteB}/versions`, { token: owner.token })).body.versions[0].id
      assertError(await server.api('GET', `/v1/jobs/${jobOfB}`, { token: limited }), 404, 'NOT_FOUND')
    })

    test("sites: a file is reused by its sha256 only from the token's own sites", async () => {
      const page = '<!doctype html><html lang="en"><head><title>Only on B</title></head><body><p>Bytes kept by site B alone.</p></body></html>'
      const onB = await server.api('POST', `/v1/websites/${siteB}/versions`, { token: owner.token, body: { files: [{ path: 'index.html', content: page }] } })
      assert.equal(onB.status, 201, onB.text)
      const { createHash } = await import('node:crypto')
      const sha256 = createHash('sha256').update(page).digest('hex')
      const byHash = { files: [{ path: 'index.html', sha256 }], promote: false }
      const limited = await token(['preview'], [siteA])
      const refused = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: limited, body: byHash })
      assert.equal(refused.status, 422, refused.text)
      assert.equal(refused.body.error.code, 'PUBLISH_INVALID')
      assert.deepEqual(
        refused.body.error.violations.map((v: { code: string }) => v.code),
        ['UNKNOWN_HASH'],
        'the bytes of a site outside the token are not the token’s to reuse',
      )
      const unlimited = await server.api('POST', `/v1/websites/${siteA}/versions`, { token: await token(['preview']), body: byHash })
      assert.equal(unlimited.status, 201, unlimited.text)
    })

    test('sites: a token limited to some sites cannot create a website', async () => {
      const limited = await token(['promote', 'read'], [siteA])
      const res = await server.api('POST', '/v1/websites', { token: limited, body: { category: 'other', files: bundle() } })
      assertError(res, 403, 'TOKEN_NOT_ALLOWED', /limited to some websites/)
    })

    test("the listing's websiteLimits say what this token may do: canCreate only when it may create; none for a token limited to some sites", async () => {
      const full = await server.api('GET', '/v1/websites', { token: owner.token })
      assert.equal(full.body.websiteLimits.canCreate, true, JSON.stringify(full.body.websiteLimits))
      const readOnly = await server.api('GET', '/v1/websites', { token: await token(['read']) })
      assert.equal(readOnly.status, 200, readOnly.text)
      assert.equal(readOnly.body.websiteLimits.canCreate, false, 'a read-only token is refused createWebsite')
      assert.equal(readOnly.body.websiteLimits.count, full.body.websiteLimits.count)
      // The account's figures (its other sites, their form submissions) are beyond a token limited to some sites.
      const limited = await server.api('GET', '/v1/websites', { token: await token(['promote', 'read'], [siteA]) })
      assert.equal(limited.status, 200, limited.text)
      assert.deepEqual(
        limited.body.items.map((item: { id: string }) => item.id),
        [siteA],
      )
      assert.equal(limited.body.websiteLimits, undefined, JSON.stringify(limited.body.websiteLimits))
    })

    test('an unknown capability, or a site that is unknown or not the person’s, creates no token', async () => {
      const stranger = await createUser(server)
      const strangerSite = (await createSite(server, { owner: stranger })).websiteId
      const before = (await server.server.services.tokens.list(owner.id)).length
      const attempts = [
        { capabilities: ['read', 'publish'], field: 'capabilities', message: /publish/ },
        { sites: ['web_nope'], field: 'sites', message: /web_nope/ },
        { sites: [siteA, strangerSite], field: 'sites', message: new RegExp(strangerSite) },
      ]
      for (const { field, message, ...scope } of attempts) {
        await assert.rejects(
          server.server.services.tokens.create(owner.id, scope),
          (error: any) => error.code === 'VALIDATION_FAILED' && message.test(error.fields[field]),
        )
      }
      assert.equal((await server.server.services.tokens.list(owner.id)).length, before)
    })

    test('the OpenAPI document states the capability of every operation', async () => {
      const document = (await server.api('GET', '/openapi.json')).body
      for (const [path, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          if (!path.startsWith('/v1') || typeof operation !== 'object' || !operation.operationId) continue
          // The index and an upload's signed URL take no token.
          if (Array.isArray(operation.security) && operation.security.length === 0) continue
          assert.ok(operation['x-plinth-capability'], `${method.toUpperCase()} ${path} states its capability`)
        }
      }
      assert.equal(document.paths['/v1/websites'].post['x-plinth-capability'], 'create-site')
    })
  })
}
