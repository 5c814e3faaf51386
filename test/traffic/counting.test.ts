/**
 * Traffic counted by the site server, exactly: a scripted set of visits gives its page views,
 * unique visitors, bots, 404s with the links that led there, referring hosts and bytes; across a
 * clean restart (the stop writes what was counted) and across two instances on one PostgreSQL
 * database, whose flushes add up and whose visitors are one set.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { TRAFFIC_AGENTS_PER_ADDRESS, TRAFFIC_VISITORS_PER_HOUR } from '../../src/core/limits.ts'
import { TrafficRepository } from '../../src/traffic/traffic.repository.ts'
import { createSite, createUser } from '../helpers/factories.ts'
import { startOnStore, type TestServer, testConfig } from '../helpers/server.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'
import { assertLists, expectedTotals, scriptedVisits, SITE_FILES, TRAFFIC_ENV, trafficOf, visit } from './visits.ts'

/** Servers on one store: each closed by the test, the store disposed of once at the end. */
function serversOn(store: TestStore, env: Record<string, string> = {}) {
  const config = testConfig(store.dataDir, { ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}), ...TRAFFIC_ENV, ...env })
  const kept = { ...store, dispose: () => Promise.resolve() }
  return () => startOnStore(kept, config)
}

for (const store of STORES) {
  describe(`traffic counting (${store.name})`, { skip: store.skip }, () => {
    let testStore: TestStore
    let server: TestServer
    let start: () => Promise<TestServer>
    before(async () => {
      testStore = await createStore(store.name)
      start = serversOn(testStore)
      server = await start()
    })
    after(async () => {
      await server?.close()
      await testStore?.dispose()
    })

    test('a scripted set of visits is counted exactly', async () => {
      const site = await createSite(server, { files: SITE_FILES })
      const bytes = await visit(server, site.slug, scriptedVisits(site.slug))
      await server.server.traffic.flush()
      const traffic = await trafficOf(server, site.owner.token, site.websiteId)
      assert.deepEqual(traffic.totals, expectedTotals(bytes))
      assertLists(traffic, site.slug)
      assert.equal(traffic.granularity, 'day')
      assert.equal(traffic.series.length, 7)
      const today = traffic.series.at(-1)
      assert.deepEqual({ ...today, start: undefined }, { start: undefined, requests: 9, pageViews: 3, visitors: 2, bytes })
      assert.ok(traffic.series.slice(0, 6).every((point: any) => point.requests === 0))

      // By hour, the same figures fall in the current hour (or the two around it, at a turn of the hour).
      const hourly = await trafficOf(server, site.owner.token, site.websiteId, '?granularity=hour')
      assert.equal(hourly.series.length, 7 * 24)
      assert.equal(
        hourly.series.reduce((sum: number, point: any) => sum + point.pageViews, 0),
        3,
      )
      assert.deepEqual(hourly.totals, traffic.totals)
    })

    test(`one address counts at most ${TRAFFIC_AGENTS_PER_ADDRESS} visitors however many user agents it invents; page views all count`, async () => {
      const site = await createSite(server, { files: SITE_FILES })
      const visits = Array.from({ length: 3 * TRAFFIC_AGENTS_PER_ADDRESS }, (_, i) => ({
        path: '/',
        address: '198.51.100.7',
        agent: `Mozilla/5.0 (X11; Linux x86_64) Firefox/${100 + i}.0`,
      }))
      await visit(server, site.slug, [...visits, { path: '/', address: '198.51.100.8', agent: visits[0]!.agent }])
      await server.server.traffic.flush()
      const traffic = await trafficOf(server, site.owner.token, site.websiteId)
      assert.equal(traffic.totals.pageViews, visits.length + 1)
      assert.equal(traffic.totals.visitors, TRAFFIC_AGENTS_PER_ADDRESS + 1)
    })

    test(`a site keeps at most ${TRAFFIC_VISITORS_PER_HOUR} visitors an hour, across flushes`, async () => {
      const site = await createSite(server, { files: SITE_FILES })
      const repo = new TrafficRepository(server.server.db.kysely)
      const hour = new Date().toISOString().slice(0, 13)
      const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ website_id: site.websiteId, hour, visitor: `v${from + i}` }))
      await repo.add({ hours: [], keys: [], visitors: rows(0, TRAFFIC_VISITORS_PER_HOUR - 5) })
      await repo.add({ hours: [], keys: [], visitors: rows(TRAFFIC_VISITORS_PER_HOUR - 5, 20) })
      await repo.add({ hours: [], keys: [], visitors: rows(TRAFFIC_VISITORS_PER_HOUR + 100, 20) })
      const held = await server.server.db.kysely
        .selectFrom('traffic_visitors')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('website_id', '=', site.websiteId)
        .executeTakeFirstOrThrow()
      assert.equal(Number(held.n), TRAFFIC_VISITORS_PER_HOUR)
    })

    test('a preview and a site nobody visits count nothing', async () => {
      const site = await createSite(server, { files: SITE_FILES })
      const quiet = await createSite(server, { owner: site.owner, files: SITE_FILES })
      await server.site(`${site.slug}--v1`, '/', { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' } })
      await server.server.traffic.flush()
      for (const one of [site, quiet]) {
        const traffic = await trafficOf(server, site.owner.token, one.websiteId)
        assert.deepEqual(traffic.totals, { requests: 0, pageViews: 0, visitors: 0, bytes: 0, notFound: 0, bots: 0 })
      }
    })

    test('a clean stop writes what it counted, and the next server adds to it', async () => {
      const site = await createSite(server, { files: SITE_FILES })
      const bytes = await visit(server, site.slug, scriptedVisits(site.slug))
      // No flush: the stop writes the counts.
      await server.server.close()
      server = await start()
      const more = await visit(server, site.slug, scriptedVisits(site.slug))
      await server.server.traffic.flush()
      const traffic = await trafficOf(server, site.owner.token, site.websiteId)
      // The same people came back the same day: still two visitors.
      assert.deepEqual(traffic.totals, expectedTotals(bytes + more, 2))
      assertLists(traffic, site.slug, 2)
    })
  })
}

describe('traffic counting on two instances of one PostgreSQL database', { skip: STORES[1]!.skip }, () => {
  let testStore: TestStore
  let servers: TestServer[] = []
  before(async () => {
    testStore = await createStore('postgres')
    const start = serversOn(testStore)
    servers = [await start(), await start()]
  })
  after(async () => {
    for (const server of servers) await server.server.close()
    await testStore?.dispose()
  })

  test('their counts add up exactly and a visitor seen by both is one visitor', async () => {
    const [first, second] = servers as [TestServer, TestServer]
    const owner = await createUser(first)
    const site = await createSite(first, { owner, files: SITE_FILES })
    // Every visit twice, once on each instance, in turns: each person meets both instances.
    const visits = scriptedVisits(site.slug)
    const bytes = (await visit([first, second], site.slug, visits)) + (await visit([second, first], site.slug, visits))
    await Promise.all([first.server.traffic.flush(), second.server.traffic.flush()])
    for (const server of servers) {
      const traffic = await trafficOf(server, owner.token, site.websiteId)
      assert.deepEqual(traffic.totals, expectedTotals(bytes, 2))
      assertLists(traffic, site.slug, 2)
    }
  })
})
