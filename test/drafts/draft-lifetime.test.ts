/**
 * How long a draft and its bytes live: a draft nobody writes to expires after
 * PLINTH_DRAFT_TTL_DAYS (every write moves that on), is gone for every caller at once, and is
 * removed with the blobs only it held by the sweep at start (and hourly); while it lives, its
 * blobs survive the blob sweep; bytes it stops holding go at once, and deleting its website takes
 * its blobs unless something else holds them. Time is moved by setting expires_at, never by waiting.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, utimesSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { assertError, createSite, createUser, sha256, type TestUser } from '../helpers/factories.ts'
import { startOnStore, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const DAY_MS = 86_400_000
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 60 * 60 * 1000)

for (const store of STORES) {
  describe(`draft lifetime (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name, { PLINTH_DRAFT_TTL_DAYS: '2' })
    })
    after(() => server?.close())

    const blobFile = (hash: string) => path.join(server.store.dataDir, 'blobs', hash.slice(0, 2), hash)
    const db = () => server.server.db.kysely
    const expire = (draftId: string) =>
      db()
        .updateTable('drafts')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', draftId)
        .execute()

    async function startDraft(user: Pick<TestUser, 'token'>, websiteId: string) {
      const created = await server.api('POST', `/v1/websites/${websiteId}/drafts`, { token: user.token })
      assert.equal(created.status, 201, created.text)
      const base = `/v1/websites/${websiteId}/drafts/${created.body.draftId}`
      const call = (method: string, suffix: string, body?: unknown) =>
        server.api(method, base + suffix, { token: user.token, ...(body === undefined ? {} : { body }) })
      return { draft: created.body, call }
    }

    /** Content no other test stores, so its blob is this test's alone. */
    const unique = () => `/* ${randomBytes(12).toString('hex')} */ p { margin: 0; }`

    test('a draft expires PLINTH_DRAFT_TTL_DAYS after its last write; every write moves that on', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const { draft, call } = await startDraft(owner, site.websiteId)
      assert.equal(Date.parse(draft.expiresAt) - Date.parse(draft.updatedAt), 2 * DAY_MS)
      const soon = new Date(Date.now() + 60_000).toISOString()
      await db().updateTable('drafts').set({ expires_at: soon }).where('id', '=', draft.draftId).execute()
      assert.equal((await call('GET', '')).body.expiresAt, soon, 'reading moves nothing')
      assert.equal((await call('PUT', '/files/a.css', { content: 'a{}' })).status, 201)
      const written = (await call('GET', '')).body
      assert.ok(written.updatedAt > draft.updatedAt)
      assert.equal(Date.parse(written.expiresAt) - Date.parse(written.updatedAt), 2 * DAY_MS)
    })

    test('an expired draft is gone at once: not listed, not found, not counted, not written', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const { draft, call } = await startDraft(owner, site.websiteId)
      await expire(draft.draftId)
      assertError(await call('GET', ''), 404, 'NOT_FOUND')
      assertError(await call('PUT', '/files/a.css', { content: 'a{}' }), 404, 'NOT_FOUND')
      assertError(await call('GET', '/files/index.html'), 404, 'NOT_FOUND')
      assertError(await call('POST', '/publish', {}), 404, 'NOT_FOUND')
      const list = await server.api('GET', `/v1/websites/${site.websiteId}/drafts`, { token: owner.token })
      assert.deepEqual(list.body.items, [])
      for (let i = 0; i < 5; i++) await startDraft(owner, site.websiteId)
    })

    test('the sweep removes expired drafts and the blobs only they held, and keeps open ones', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const expiring = await startDraft(owner, site.websiteId)
      const open = await startDraft(owner, site.websiteId)
      const only = unique()
      const shared = unique()
      await expiring.call('PUT', '/files/only.css', { content: only })
      await expiring.call('PUT', '/files/shared.css', { content: shared })
      await open.call('PUT', '/files/shared.css', { content: shared })
      await expire(expiring.draft.draftId)

      assert.ok((await server.server.services.drafts.sweepExpired()) >= 1)
      const rows = await db().selectFrom('drafts').select('id').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(
        rows.map((r) => r.id),
        [open.draft.draftId],
      )
      assert.equal(existsSync(blobFile(sha256(only))), false, 'the blob only the expired draft held is removed')
      assert.equal(existsSync(blobFile(sha256(shared))), true, 'a blob an open draft holds stays')
      assert.equal((await open.call('GET', '/files/shared.css')).body.content, shared)
    })

    test('a server sweeps expired drafts at start', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const { draft } = await startDraft(owner, site.websiteId)
      await expire(draft.draftId)
      // A second server on the same store, as a restart.
      const restarted = await startOnStore({ ...server.store, dispose: async () => {} }, server.config)
      try {
        const left = await restarted.server.db.kysely.selectFrom('drafts').select('id').where('id', '=', draft.draftId).execute()
        assert.deepEqual(left, [])
      } finally {
        await restarted.close()
      }
    })

    test("a draft's blobs survive the blob sweep; those it stops holding are removed at once", async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const { call } = await startDraft(owner, site.websiteId)
      const first = unique()
      const kept = unique()
      await call('PUT', '/files/kept.css', { content: kept })
      await call('PUT', '/files/replaced.css', { content: first })
      for (const hash of [sha256(kept), sha256(first)]) utimesSync(blobFile(hash), TWO_HOURS_AGO, TWO_HOURS_AGO)
      await server.server.sweepBlobs()
      assert.equal(existsSync(blobFile(sha256(kept))), true, 'an old blob a draft holds is kept')
      assert.equal((await call('GET', '/files/kept.css')).body.content, kept)

      await call('PUT', '/files/replaced.css', { content: unique() })
      assert.equal(existsSync(blobFile(sha256(first))), false, 'the bytes a write replaced are removed')
      const edited = unique()
      await call('PUT', '/files/edited.css', { content: edited })
      await call('PATCH', '/files/edited.css', { edits: [{ oldText: 'margin', newText: 'padding' }] })
      assert.equal(existsSync(blobFile(sha256(edited))), false, 'the bytes an edit replaced are removed')
      const deleted = unique()
      await call('PUT', '/files/deleted.css', { content: deleted })
      await call('DELETE', '/files/deleted.css')
      assert.equal(existsSync(blobFile(sha256(deleted))), false)
      // Bytes a version also holds stay whatever the draft does.
      const [index] = (await call('GET', '')).body.files.filter((f: { path: string }) => f.path === 'index.html')
      await call('DELETE', '/files/index.html')
      assert.equal(existsSync(blobFile(index.sha256)), true)

      assert.equal((await call('DELETE', '')).status, 204)
      assert.equal(existsSync(blobFile(sha256(kept))), false, 'discarding removes the blobs only the draft held')
    })

    test("publishing a draft keeps its bytes, now the version's", async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const { call } = await startDraft(owner, site.websiteId)
      const css = unique()
      await call('PUT', '/files/new.css', { content: css })
      assert.equal((await call('POST', '/publish', {})).status, 201)
      assert.equal(existsSync(blobFile(sha256(css))), true)
      assert.equal((await server.site(site.slug, '/new.css')).body.toString(), css)
    })

    test("deleting a website deletes its drafts and the blobs only they held; another site's draft keeps its own", async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner })
      const other = await createSite(server, { owner })
      const mine = await startDraft(owner, site.websiteId)
      const theirs = await startDraft(owner, other.websiteId)
      const only = unique()
      const shared = unique()
      await mine.call('PUT', '/files/only.css', { content: only })
      await mine.call('PUT', '/files/shared.css', { content: shared })
      await theirs.call('PUT', '/files/shared.css', { content: shared })

      assert.equal((await server.api('DELETE', `/v1/websites/${site.websiteId}`, { token: owner.token })).status, 204)
      const left = await db().selectFrom('drafts').select('id').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(left, [])
      const files = await db().selectFrom('draft_files').select('path').where('draft_id', '=', mine.draft.draftId).execute()
      assert.deepEqual(files, [])
      assert.equal(existsSync(blobFile(sha256(only))), false)
      assert.equal(existsSync(blobFile(sha256(shared))), true)
      assert.equal((await theirs.call('GET', '/files/shared.css')).body.content, shared)
    })
  })
}
