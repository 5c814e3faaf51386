/**
 * Scheduled promotions and preview expiry, on an injected clock (no test waits): a promote with
 * promoteAt answers 202 and happens once the clock passes it and the scheduler ticks, not before;
 * schedules are listed and cancelled; bad times are 400; a schedule due while no server ran is
 * run by the next server at its start; two instances on one database ticking at once promote
 * exactly once; a preview given an expiry answers 404 from then on. Every store.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createSite, createUser, createVersion, siteWithPreview } from '../helpers/factories.ts'
import { bundle, startOnStore, type TestServer, testConfig } from '../helpers/server.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const MINUTE = 60_000

/** A clock the test moves. */
function testClock() {
  let at = Date.now()
  return { now: () => new Date(at), advance: (ms: number) => (at += ms), iso: (ms = 0) => new Date(at + ms).toISOString() }
}

/** Servers on one store and one clock: each closed by the test, the store disposed of once at the end. */
function serversOn(store: TestStore, now: () => Date) {
  const config = testConfig(store.dataDir, store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {})
  const kept = { ...store, dispose: () => Promise.resolve() }
  return () => startOnStore(kept, config, undefined, { now })
}

for (const store of STORES) {
  describe(`scheduled promotions and preview expiry (${store.name})`, { skip: store.skip }, () => {
    let testStore: TestStore
    let server: TestServer
    const clock = testClock()
    before(async () => {
      testStore = await createStore(store.name)
      server = await serversOn(testStore, clock.now)()
    })
    after(async () => {
      await server?.close()
      await testStore?.dispose()
    })

    const liveTitle = async (on: TestServer, slug: string) => /<title>([^<]*)<\/title>/.exec((await on.site(slug)).body.toString())?.[1]

    const schedule = (on: TestServer, token: string, websiteId: string, versionId: string, promoteAt: unknown) =>
      on.api('POST', `/v1/websites/${websiteId}/versions/${versionId}/promote`, { token, body: { promoteAt } })

    test('a scheduled promote answers 202, and happens once the time has come and the scheduler ticks', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const promoteAt = clock.iso(10 * MINUTE)
      const res = await schedule(server, owner.token, site.websiteId, preview.jobId, promoteAt)
      assert.equal(res.status, 202, res.text)
      assert.match(res.body.scheduleId, /^sch_/)
      assert.equal(res.body.versionId, preview.jobId)
      assert.equal(res.body.promoteAt, promoteAt)
      assert.equal(res.body.status, 'pending')

      clock.advance(9 * MINUTE)
      await server.server.approvals.schedules.runDue()
      assert.equal(await liveTitle(server, site.slug), 'One', 'not before its time')
      clock.advance(1 * MINUTE)
      assert.equal(await server.server.approvals.schedules.runDue(), 1)
      assert.equal(await liveTitle(server, site.slug), 'Two')
      assert.equal(await server.server.approvals.schedules.runDue(), 0, 'run once')

      const list = await server.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: owner.token })
      assert.equal(list.status, 200)
      assert.equal(list.body.items.length, 1)
      assert.equal(list.body.items[0].status, 'done')
      assert.ok(list.body.items[0].finishedAt)
    })

    test("a scheduled promotion approves the version's pending request, as the person who scheduled it", async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const asked = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`, { token: owner.token })
      assert.equal(asked.status, 201, asked.text)
      await schedule(server, owner.token, site.websiteId, preview.jobId, clock.iso(2 * MINUTE))
      clock.advance(3 * MINUTE)
      assert.equal(await server.server.approvals.schedules.runDue(), 1)
      assert.equal(await liveTitle(server, site.slug), 'Two')
      const outcome = await server.api('GET', `/v1/websites/${site.websiteId}/promotion-requests/${asked.body.requestId}`, { token: owner.token })
      assert.equal(outcome.body.status, 'approved')
      assert.equal(outcome.body.decidedAt, clock.iso(), 'decided when the schedule ran, on its clock')
    })

    test('the un-scheduled promote is unchanged: 200 with the version, live at once', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const res = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promote`, { token: owner.token })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.isCurrent, true)
      const empty = await server.api('POST', `/v1/websites/${site.websiteId}/versions/1/promote`, { token: owner.token, body: {} })
      assert.equal(empty.status, 200, empty.text)
      assert.equal(await liveTitle(server, site.slug), 'One')
    })

    test('a cancelled schedule does not run; cancelling twice, or one that ran, is 409 NOT_PENDING', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const made = await schedule(server, owner.token, site.websiteId, preview.jobId, clock.iso(5 * MINUTE))
      const path = `/v1/websites/${site.websiteId}/schedules/${made.body.scheduleId}`
      const stranger = await createUser(server)
      assertError(await server.api('DELETE', path, { token: stranger.token }), 404, 'NOT_FOUND')
      assert.equal((await server.api('DELETE', path, { token: owner.token })).status, 204)
      assertError(await server.api('DELETE', path, { token: owner.token }), 409, 'NOT_PENDING')
      clock.advance(6 * MINUTE)
      await server.server.approvals.schedules.runDue()
      assert.equal(await liveTitle(server, site.slug), 'One')
      const list = await server.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: owner.token })
      assert.equal(list.body.items[0].status, 'cancelled')
      assertError(await server.api('DELETE', `/v1/websites/${site.websiteId}/schedules/sch_none`, { token: owner.token }), 404, 'NOT_FOUND')
    })

    test('promoteAt in the past, unparseable, without a time zone or more than a year ahead is 400', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      for (const promoteAt of [clock.iso(-MINUTE), 'tomorrow', '2030-01-01T10:00:00', clock.iso(400 * 24 * 60 * MINUTE)]) {
        const res = await schedule(server, owner.token, site.websiteId, preview.jobId, promoteAt)
        assertError(res, 400, 'BAD_REQUEST')
        assert.ok(res.body.error.fields.promoteAt, res.text)
      }
      assertError(await schedule(server, owner.token, site.websiteId, preview.jobId, 12), 422, 'VALIDATION_FAILED')
      assertError(await schedule(server, owner.token, site.websiteId, '99', clock.iso(MINUTE)), 404, 'NOT_FOUND')
      const list = await server.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: owner.token })
      assert.deepEqual(list.body.items, [])
    })

    test('a version published with promote false takes its expiry at once; a live one refuses one', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner, files: bundle('One') })
      const path = `/v1/websites/${site.websiteId}/versions`
      const expiresAt = clock.iso(20 * MINUTE)
      const preview = await server.api('POST', path, { token: owner.token, body: { files: bundle('Two'), promote: false, expiresAt } })
      assert.equal(preview.status, 201, preview.text)
      const label = `${site.slug}--v${preview.body.version}`
      assert.equal((await server.site(label)).status, 200)
      clock.advance(21 * MINUTE)
      assert.equal((await server.site(label)).status, 404, 'gone from its preview URL after the expiry')
      assert.equal(await liveTitle(server, site.slug), 'One')

      const versionsBefore = (await server.api('GET', path, { token: owner.token })).body.versions.length
      assertError(await server.api('POST', path, { token: owner.token, body: { files: bundle('Live'), expiresAt: clock.iso(MINUTE) } }), 400, 'BAD_REQUEST')
      assertError(
        await server.api('POST', path, { token: owner.token, body: { files: bundle('Past'), promote: false, expiresAt: clock.iso(-MINUTE) } }),
        400,
        'BAD_REQUEST',
      )
      assertError(await server.api('POST', path, { token: owner.token, body: { files: bundle('Bad'), promote: false, expiresAt: 'soon' } }), 400, 'BAD_REQUEST')
      assert.equal((await server.api('GET', path, { token: owner.token })).body.versions.length, versionsBefore, 'a refused expiry stores no version')
    })

    test('a preview given an expiry answers 404 from then on; the version itself stays', async () => {
      const { owner, site, preview } = await siteWithPreview(server)
      const label = `${site.slug}--v${preview.version}`
      const path = `/v1/websites/${site.websiteId}/versions/${preview.jobId}`
      const expiresAt = clock.iso(30 * MINUTE)
      const set = await server.api('PATCH', path, { token: owner.token, body: { expiresAt } })
      assert.equal(set.status, 200, set.text)
      assert.deepEqual(set.body, { versionId: preview.jobId, version: preview.version, previewUrl: set.body.previewUrl, expiresAt })
      assert.equal((await server.site(label)).status, 200)
      clock.advance(31 * MINUTE)
      assert.equal((await server.site(label)).status, 404)
      assert.equal(await liveTitle(server, site.slug), 'One', 'the live site is untouched')

      const cleared = await server.api('PATCH', path, { token: owner.token, body: { expiresAt: null } })
      assert.equal(cleared.body.expiresAt, null)
      assert.equal((await server.site(label)).status, 200, 'served again once the expiry is removed')

      assertError(await server.api('PATCH', path, { token: owner.token, body: { expiresAt: clock.iso(-MINUTE) } }), 400, 'BAD_REQUEST')
      assertError(
        await server.api('PATCH', `/v1/websites/${site.websiteId}/versions/1`, { token: owner.token, body: { expiresAt: clock.iso(MINUTE) } }),
        409,
        'ALREADY_LIVE',
      )
    })

    test('a schedule due while no server ran is run by the next server at its start', async () => {
      const start = serversOn(testStore, clock.now)
      const first = await start()
      const { owner, site, preview } = await siteWithPreview(first)
      assert.equal((await schedule(first, owner.token, site.websiteId, preview.jobId, clock.iso(15 * MINUTE))).status, 202)
      await first.close()
      clock.advance(20 * MINUTE)
      const second = await start()
      try {
        assert.equal(await liveTitle(second, site.slug), 'Two')
        const list = await second.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: owner.token })
        assert.equal(list.body.items[0].status, 'done')
      } finally {
        await second.close()
      }
    })
  })
}

describe('scheduled promotions on two instances of one PostgreSQL database', { skip: STORES[1]!.skip }, () => {
  let testStore: TestStore
  const servers: TestServer[] = []
  const clock = testClock()
  before(async () => {
    testStore = await createStore('postgres')
    const start = serversOn(testStore, clock.now)
    servers.push(await start(), await start())
  })
  after(async () => {
    for (const server of servers) await server.close()
    await testStore?.dispose()
  })

  test('both tick at once: each schedule promotes exactly once', async () => {
    const [a, b] = servers as [TestServer, TestServer]
    const owner = await createUser(a)
    const sites = []
    for (let i = 0; i < 5; i++) {
      const site = await createSite(a, { owner, files: bundle('One') })
      const preview = await createVersion(a, owner, site.websiteId, { files: bundle('Two'), promote: false })
      const hook = await a.api('POST', `/v1/websites/${site.websiteId}/webhooks`, {
        token: owner.token,
        body: { url: 'https://hooks.example.com/plinth', events: ['version.promoted'] },
      })
      assert.equal(hook.status, 201, hook.text)
      const made = await b.api('POST', `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promote`, {
        token: owner.token,
        body: { promoteAt: clock.iso(MINUTE) },
      })
      assert.equal(made.status, 202, made.text)
      sites.push(site)
    }
    clock.advance(2 * MINUTE)
    const ran = await Promise.all([a.server.approvals.schedules.runDue(), b.server.approvals.schedules.runDue(), a.server.approvals.schedules.runDue()])
    assert.equal(
      ran.reduce((sum, n) => sum + n, 0),
      5,
      `runs per tick: ${ran.join(', ')}`,
    )
    for (const site of sites) {
      const promoted = await a.server.db.kysely
        .selectFrom('webhook_events')
        .select('id')
        .where('website_id', '=', site.websiteId)
        .where('type', '=', 'version.promoted')
        .execute()
      assert.equal(promoted.length, 1, `one promotion of ${site.slug}`)
      assert.match((await b.site(site.slug)).body.toString(), /<title>Two<\/title>/)
    }
  })
})
