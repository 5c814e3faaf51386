/**
 * Promotion requests over REST, on every store: a caller asks for a stored version to go live, a
 * person approves (it goes live) or declines (the live version stays, the reason is kept), or the
 * requester withdraws it (cancelled), and the caller reads the outcome; a version made live
 * without its request has it approved by whoever did; one pending request per version; the live
 * version cannot be asked for; a stranger sees nothing; the webhook events are recorded.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Principal } from '../../src/core/principal.ts'
import { addEditor, assertError, createSite, createToken, createUser, createVersion, siteWithPreview, type TestUser } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

for (const store of STORES) {
  describe(`promotion requests over REST (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    /** A person's principal, as the dashboard makes it from a session. */
    const person = (user: TestUser): Promise<Principal> =>
      Promise.resolve({ userId: user.id, email: user.email, name: null, tokenId: 'web-session', access: 'both', capabilities: null, sites: null })
    const liveTitle = async (slug: string) => /<title>([^<]*)<\/title>/.exec((await server.site(slug)).body.toString())?.[1]

    /** A site with a preview, an agent's token that may ask for it, an editor, and a webhook recording `events`. */
    async function askingSite(events: string[]) {
      const { owner, site, preview } = await siteWithPreview(server)
      const agent = await createToken(server, owner, { capabilities: ['read', 'preview'] })
      const editor = await addEditor(server, site.websiteId)
      const hook = await server.api('POST', `/v1/websites/${site.websiteId}/webhooks`, {
        token: owner.token,
        body: { url: 'https://hooks.example.com/plinth', events },
      })
      assert.equal(hook.status, 201, hook.text)
      return { owner, site, preview, agent, editor }
    }

    test('a request is pending, approved by a person it goes live, and the caller reads approved', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, {
        token: owner.token,
        body: { note: 'New opening hours' },
      })
      assert.equal(asked.status, 201, asked.text)
      assert.match(asked.body.requestId, /^prq_/)
      assert.equal(asked.body.versionId, preview.jobId)
      assert.equal(asked.body.status, 'pending')
      assert.equal(asked.body.note, 'New opening hours')
      assert.equal(asked.body.decidedAt, undefined)
      assert.match(asked.body.previewUrl, new RegExp(`${site.slug}--v2`))
      const read = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: owner.token })
      assert.deepEqual(read.body, asked.body)
      assert.equal(await liveTitle(site.slug), 'One')

      const review = await server.server.services.promotionRequests.review(await person(owner), site.websiteId, asked.body.requestId)
      assert.deepEqual(
        review.diff?.files.map((f) => [f.path, f.status]),
        [['index.html', 'changed']],
      )
      assert.deepEqual(review.warnings, [])
      await server.server.services.promotionRequests.approve(await person(owner), site.websiteId, asked.body.requestId)
      assert.equal(await liveTitle(site.slug), 'Two')
      const outcome = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: owner.token })
      assert.equal(outcome.body.status, 'approved')
      assert.ok(outcome.body.decidedAt)
      assertError(
        await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token }),
        409,
        'ALREADY_LIVE',
      )
      await assert.rejects(server.server.services.promotionRequests.approve(await person(owner), site.websiteId, asked.body.requestId), { code: 'NOT_PENDING' })
    })

    test('a declined request keeps the live version and tells the reason', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const editor = await addEditor(server, site.websiteId)
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.version}/promotion-request`, { token: owner.token })
      assert.equal(asked.status, 201, asked.text)
      assert.equal(asked.body.note, null)
      await server.server.services.promotionRequests.decline(await person(editor), site.websiteId, asked.body.requestId, 'The phone number is wrong')
      const outcome = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: owner.token })
      assert.equal(outcome.body.status, 'declined')
      assert.equal(outcome.body.reason, 'The phone number is wrong')
      assert.equal(await liveTitle(site.slug), 'One')
      const again = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      assert.equal(again.status, 201, 'a declined version may be asked for again')
      assert.notEqual(again.body.requestId, asked.body.requestId)
    })

    test('the requester withdraws a pending request: cancelled, no one approves it, the live version stays', async () => {
      const { owner, site, preview, agent, editor } = await askingSite(['promotion.decided'])
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: agent.token })
      const path = `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`

      const stranger = await createUser(server)
      assertError(await server.api('DELETE', path, { token: stranger.token }), 404, 'NOT_FOUND')
      const reader = await createToken(server, owner, { capabilities: ['read'] })
      assertError(await server.api('DELETE', path, { token: reader.token }), 403, 'TOKEN_NOT_ALLOWED')
      assert.equal((await server.api('GET', path, { token: owner.token })).body.status, 'pending', 'refused withdrawals change nothing')

      const withdrawn = await server.api('DELETE', path, { token: agent.token })
      assert.equal(withdrawn.status, 204, withdrawn.text)
      const outcome = await server.api('GET', path, { token: agent.token })
      assert.equal(outcome.body.status, 'cancelled')
      assert.ok(Date.parse(outcome.body.decidedAt) <= Date.now())
      assert.equal(outcome.body.reason, undefined)
      const decided = await server.server.db.kysely.selectFrom('webhook_events').select('body').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(
        decided.map((event) => JSON.parse(event.body).data.status),
        ['cancelled'],
        'the withdrawal is the promotion.decided event',
      )

      assertError(await server.api('DELETE', path, { token: agent.token }), 409, 'NOT_PENDING')
      await assert.rejects(server.server.services.promotionRequests.approve(await person(editor), site.websiteId, asked.body.requestId), /cancelled already/)
      assert.equal(await liveTitle(site.slug), 'One', 'the live version stays')
      const pending = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests?status=pending`, { token: owner.token })
      assert.deepEqual(pending.body.items, [])
      const again = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: agent.token })
      assert.equal(again.status, 201, 'a withdrawn version may be asked for again')
    })

    test('a version promoted without its request has the request approved by whoever promoted it', async () => {
      const { owner, site, preview, agent, editor } = await askingSite(['promotion.decided'])
      const other = await createVersion(server, owner, site.websiteId, { files: bundle('Three'), promote: false })
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: agent.token })
      const untouched = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${other.jobId}/promotion-request`, { token: agent.token })
      const path = `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`

      const promoted = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.version}/promote`, { token: editor.token })
      assert.equal(promoted.status, 200, promoted.text)
      assert.equal(await liveTitle(site.slug), 'Two')
      const outcome = await server.api('GET', path, { token: agent.token })
      assert.equal(outcome.body.status, 'approved', 'the requester reads that its version went live')
      assert.ok(Date.parse(outcome.body.decidedAt) <= Date.now())
      const row = await server.server.db.kysely
        .selectFrom('promotion_requests')
        .select('decided_by')
        .where('id', '=', asked.body.requestId)
        .executeTakeFirstOrThrow()
      assert.equal(row.decided_by, editor.id, 'approved by whoever promoted')
      const events = await server.server.db.kysely.selectFrom('webhook_events').select('body').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(
        events.map((event) => JSON.parse(event.body).data),
        [outcome.body],
        'the promotion.decided event, once',
      )
      const otherRequest = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${untouched.body.requestId}`, { token: owner.token })
      assert.equal(otherRequest.body.status, 'pending', "another version's request stays pending")

      // Promoting it again (a rollback and back) changes nothing more.
      assert.equal((await server.api('POST', `/v1/websites/${site.websiteId}/versions/1/promote`, { token: owner.token })).status, 200)
      assert.equal((await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.version}/promote`, { token: owner.token })).status, 200)
      assert.deepEqual((await server.api('GET', path, { token: agent.token })).body, outcome.body)
      assert.equal((await server.server.db.kysely.selectFrom('webhook_events').select('id').where('website_id', '=', site.websiteId).execute()).length, 1)
    })

    test('a decided request cannot be withdrawn; an unknown one is 404', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      await server.server.services.promotionRequests.decline(await person(owner), site.websiteId, asked.body.requestId, 'Not yet')
      const path = `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`
      assertError(await server.api('DELETE', path, { token: owner.token }), 409, 'NOT_PENDING')
      assert.equal((await server.api('GET', path, { token: owner.token })).body.reason, 'Not yet', 'the decision stays')
      assertError(await server.api('DELETE', `/v1/websites/${site.websiteId}/promotion-requests/prq_none`, { token: owner.token }), 404, 'NOT_FOUND')
    })

    test('a second request for a version with a pending one answers that one; the list shows them', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const path = `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`
      const first = await server.api('POST', path, { token: owner.token, body: { note: 'a' } })
      const second = await server.api('POST', path, { token: owner.token, body: { note: 'b' } })
      assert.equal(second.status, 200, second.text)
      assert.deepEqual(second.body, first.body)
      const list = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests?status=pending`, { token: owner.token })
      assert.deepEqual(
        list.body.items.map((r: any) => r.requestId),
        [first.body.requestId],
      )
    })

    test('approving a version superseded meanwhile still makes that version live', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      await createVersion(server, owner, site.websiteId, { files: bundle('Three') })
      assert.equal(await liveTitle(site.slug), 'Three')
      await server.server.services.promotionRequests.approve(await person(owner), site.websiteId, asked.body.requestId)
      assert.equal(await liveTitle(site.slug), 'Two')
    })

    test('strangers get 404; unknown versions and requests are 404; bad notes are 422', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const stranger = await createUser(server)
      const path = `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`
      assertError(await server.api('POST', path, { token: stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('POST', `/v1/websites/${site.websiteId}/versions/99/promotion-request`, { token: owner.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/prq_nope`, { token: owner.token }), 404, 'NOT_FOUND')
      assertError(await server.api('POST', path, { token: owner.token, body: { note: 'x'.repeat(2001) } }), 422, 'VALIDATION_FAILED')
      assertError(await server.api('POST', path, { token: owner.token, body: { other: 1 } }), 422, 'VALIDATION_FAILED')
      const asked = await server.api('POST', path, { token: owner.token })
      assertError(
        await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: stranger.token }),
        404,
        'NOT_FOUND',
      )
    })

    test('a token with read and preview asks and reads; promoting, at once or later, needs promote', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const agent = await createToken(server, owner, { name: 'agent', capabilities: ['read', 'preview'] })
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: agent.token })
      assert.equal(asked.status, 201, asked.text)
      assert.equal((await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: agent.token })).status, 200)
      assert.equal((await server.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: agent.token })).status, 200)
      const promote = `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promote`
      assertError(await server.api('POST', promote, { token: agent.token }), 403, 'TOKEN_NOT_ALLOWED')
      const later = new Date(Date.now() + 3_600_000).toISOString()
      assertError(await server.api('POST', promote, { token: agent.token, body: { promoteAt: later } }), 403, 'TOKEN_NOT_ALLOWED')
      const reader = await createToken(server, owner, { capabilities: ['read'] })
      assertError(
        await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: reader.token }),
        403,
        'TOKEN_NOT_ALLOWED',
      )
      const elsewhere = await createToken(server, owner, { sites: [(await createSite(server, { owner })).websiteId] })
      assertError(
        await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: elsewhere.token }),
        404,
        'NOT_FOUND',
      )
    })

    test('deleting a site takes its requests and schedules with it', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      const later = new Date(Date.now() + 3_600_000).toISOString()
      const scheduled = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promote`, {
        token: owner.token,
        body: { promoteAt: later },
      })
      assert.equal(scheduled.status, 202, scheduled.text)
      const deleted = await server.api('DELETE', `/v1/websites/${site.websiteId}`, { token: owner.token })
      assert.equal(deleted.status, 204, deleted.text)
      const db = server.server.db.kysely
      assert.deepEqual(await db.selectFrom('promotion_requests').select('id').where('website_id', '=', site.websiteId).execute(), [])
      assert.deepEqual(await db.selectFrom('schedules').select('id').where('website_id', '=', site.websiteId).execute(), [])
    })

    test('requests and decisions are webhook events', async () => {
      const { owner, site, preview } = await askingSite(['promotion.requested', 'promotion.decided'])
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      await server.server.services.promotionRequests.decline(await person(owner), site.websiteId, asked.body.requestId, 'no')
      const events = await server.server.db.kysely
        .selectFrom('webhook_events')
        .select(['type', 'body'])
        .where('website_id', '=', site.websiteId)
        .orderBy('created_at')
        .execute()
      assert.deepEqual(
        events.map((e) => e.type),
        ['promotion.requested', 'promotion.decided'],
      )
      assert.equal(JSON.parse(events[1]!.body).data.reason, 'no')
    })
  })
}
