/**
 * An expiry a caller sets on a draft, on an injected clock (no test waits): given at creation or
 * by PATCH, it caps the draft's life (writes move its expiry on, never past it); from then on the
 * draft and its preview host answer 404; null removes the cap. Bad times are 400. Every store.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createSite, createUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

for (const store of STORES) {
  describe(`draft expiry set by the caller (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let at = Date.now()
    const iso = (ms = 0) => new Date(at + ms).toISOString()
    before(async () => {
      server = await startTestServer(store.name, { PLINTH_DRAFT_TTL_DAYS: '2' }, undefined, { now: () => new Date(at) })
    })
    after(() => server?.close())

    async function draftOf(body: object = {}) {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const created = await server.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token: owner.token, body })
      const path = `/v1/websites/${site.websiteId}/drafts/${created.body?.draftId}`
      const label = created.body?.previewUrl ? new URL(created.body.previewUrl).hostname.split('.')[0]! : ''
      return { owner, site, created, path, label }
    }

    test('an expiry given at creation caps the draft: writes do not move it past; then the draft and its preview are 404', async () => {
      const expiresAt = iso(60 * MINUTE)
      const { owner, created, path, label } = await draftOf({ expiresAt })
      assert.equal(created.status, 201, created.text)
      assert.equal(created.body.expiresAt, expiresAt)
      assert.equal((await server.site(label)).status, 200)
      at += 10 * MINUTE
      assert.equal((await server.api('PUT', `${path}/files/a.css`, { token: owner.token, body: { content: 'a{}' } })).status, 201)
      assert.equal((await server.api('GET', path, { token: owner.token })).body.expiresAt, expiresAt, 'a write does not move it past the cap')
      at += 51 * MINUTE
      assertError(await server.api('GET', path, { token: owner.token }), 404, 'NOT_FOUND')
      assert.equal((await server.site(label)).status, 404)
    })

    test('PATCH sets and removes the cap; bad times are 400', async () => {
      const { owner, created, path, label } = await draftOf()
      assert.equal(Date.parse(created.body.expiresAt) - at, 2 * DAY, 'the TTL without a cap')
      const capped = await server.api('PATCH', path, { token: owner.token, body: { expiresAt: iso(5 * MINUTE) } })
      assert.equal(capped.status, 200, capped.text)
      assert.equal(capped.body.expiresAt, iso(5 * MINUTE))
      const freed = await server.api('PATCH', path, { token: owner.token, body: { expiresAt: null } })
      assert.equal(Date.parse(freed.body.expiresAt) - at, 2 * DAY)
      for (const expiresAt of [iso(-MINUTE), 'soon', iso(400 * DAY)])
        assertError(await server.api('PATCH', path, { token: owner.token, body: { expiresAt } }), 400, 'BAD_REQUEST')
      assertError(await server.api('PATCH', path, { token: owner.token, body: {} }), 422, 'VALIDATION_FAILED')
      await server.api('PATCH', path, { token: owner.token, body: { expiresAt: iso(MINUTE) } })
      at += 2 * MINUTE
      assert.equal((await server.site(label)).status, 404)
      assertError(await server.api('PATCH', path, { token: owner.token, body: { expiresAt: null } }), 404, 'NOT_FOUND')
    })

    test('setting or removing the cap is no write: the expiry still runs from the last write', async () => {
      const { owner, created, path } = await draftOf({ expiresAt: null })
      assert.equal(created.status, 201, created.text)
      const lastWrite = at
      at += 3 * 60 * MINUTE
      const capped = await server.api('PATCH', path, { token: owner.token, body: { expiresAt: iso(10 * DAY) } })
      assert.equal(capped.body.expiresAt, created.body.expiresAt, 'a cap later than the TTL changes nothing')
      const freed = await server.api('PATCH', path, { token: owner.token, body: { expiresAt: null } })
      assert.equal(Date.parse(freed.body.expiresAt), lastWrite + 2 * DAY)
      assert.equal(freed.body.updatedAt, created.body.updatedAt)
      // A write moves it on from now.
      assert.equal((await server.api('PUT', `${path}/files/a.css`, { token: owner.token, body: { content: 'a{}' } })).status, 201)
      assert.equal(Date.parse((await server.api('GET', path, { token: owner.token })).body.expiresAt), at + 2 * DAY)
    })
  })
}
