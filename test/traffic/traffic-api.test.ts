/**
 * Reading a site's traffic over REST and MCP: owners and editors get the figures, anyone else a
 * 404; a query the service cannot answer (bad dates, from after to, a range too long) is 400
 * BAD_REQUEST naming the parameter, another granularity 422; the default range is the 7 days
 * ending with `to`, by day or by hour; MCP's get_site_traffic gives the same
 * object as REST, to SDK 1.x and v2 clients, which both check it against its outputSchema.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { addEditor, assertError, createSite, createUser } from '../helpers/factories.ts'
import { call, CLIENTS, connect } from '../helpers/mcp.ts'
import { sharedTestServers } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { expectedTotals, scriptedVisits, SITE_FILES, TRAFFIC_ENV, trafficOf, visit } from './visits.ts'

const sharedServer = sharedTestServers()

for (const store of STORES) {
  describe(`the traffic API (${store.name})`, { skip: store.skip }, () => {
    test('owners and editors read it; a stranger gets 404, as without a token 401', async () => {
      const server = await sharedServer(store.name, TRAFFIC_ENV)
      const site = await createSite(server, { files: SITE_FILES })
      const editor = await addEditor(server, site.websiteId)
      const stranger = await createUser(server)
      const path = `/v1/websites/${site.websiteId}/traffic`
      assert.equal((await server.api('GET', path, { token: editor.token })).status, 200)
      assertError(await server.api('GET', path, { token: stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `/v1/websites/web_nothere/traffic`, { token: stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', path), 401, 'AUTH_REQUIRED')
    })

    test('a date or range it cannot answer is 400 BAD_REQUEST naming the parameter; another granularity is 422', async () => {
      const server = await sharedServer(store.name, TRAFFIC_ENV)
      const site = await createSite(server, { files: SITE_FILES })
      const cases: Array<[string, string]> = [
        ['?from=2026-13-01', 'from'],
        ['?to=yesterday', 'to'],
        ['?from=2026-02-30', 'from'],
        ['?from=2026-11-10&to=2026-11-01', 'from'],
        ['?from=2024-01-01&to=2026-01-01', 'from'],
        ['?from=2026-01-01&to=2026-03-01&granularity=hour', 'from'],
      ]
      for (const [query, field] of cases) {
        const res = await server.api('GET', `/v1/websites/${site.websiteId}/traffic${query}`, { token: site.owner.token })
        assertError(res, 400, 'BAD_REQUEST')
        assert.ok(res.body.error.fields[field], `${query}: ${res.text}`)
      }
      assertError(await server.api('GET', `/v1/websites/${site.websiteId}/traffic?when=now`, { token: site.owner.token }), 422, 'VALIDATION_FAILED')
      const week = await server.api('GET', `/v1/websites/${site.websiteId}/traffic?granularity=week`, { token: site.owner.token })
      assertError(week, 422, 'VALIDATION_FAILED')
      assert.ok(week.body.error.fields.granularity, week.text)
    })

    test('without from, the range is the 7 days ending with to, by day or by hour', async () => {
      const server = await sharedServer(store.name, TRAFFIC_ENV)
      const site = await createSite(server, { files: SITE_FILES })
      const days = await trafficOf(server, site.owner.token, site.websiteId, '?to=2026-01-31')
      assert.equal(days.from, '2026-01-25T00:00:00.000Z')
      assert.equal(days.to, '2026-02-01T00:00:00.000Z')
      assert.equal(days.series.length, 7)
      const hours = await trafficOf(server, site.owner.token, site.websiteId, '?to=2026-01-31T10:30:00Z&granularity=hour')
      assert.equal(hours.from, '2026-01-24T11:00:00.000Z')
      assert.equal(hours.to, '2026-01-31T11:00:00.000Z')
      assert.equal(hours.series.length, 7 * 24)
      const now = await trafficOf(server, site.owner.token, site.websiteId, '?granularity=hour')
      assert.equal(Date.parse(now.to) - Date.parse(now.from), 7 * 24 * 3_600_000)
    })

    test('a range is whole days or hours, every one of them in the series', async () => {
      const server = await sharedServer(store.name, TRAFFIC_ENV)
      const site = await createSite(server, { files: SITE_FILES })
      const days = await trafficOf(server, site.owner.token, site.websiteId, '?from=2026-01-01&to=2026-01-31')
      assert.equal(days.from, '2026-01-01T00:00:00.000Z')
      assert.equal(days.to, '2026-02-01T00:00:00.000Z')
      assert.equal(days.series.length, 31)
      assert.deepEqual(days.series[0], { start: '2026-01-01T00:00:00.000Z', requests: 0, pageViews: 0, visitors: 0, bytes: 0 })
      const hours = await trafficOf(server, site.owner.token, site.websiteId, '?from=2026-01-01T10:30:00Z&to=2026-01-01T12:00:00Z&granularity=hour')
      assert.deepEqual(
        hours.series.map((point: any) => point.start),
        ['2026-01-01T10:00:00.000Z', '2026-01-01T11:00:00.000Z', '2026-01-01T12:00:00.000Z'],
      )
    })

    for (const kind of CLIENTS) {
      test(`MCP get_site_traffic gives what REST gives (${kind} client)`, async () => {
        const server = await sharedServer(store.name, TRAFFIC_ENV)
        const site = await createSite(server, { files: SITE_FILES })
        const bytes = await visit(server, site.slug, scriptedVisits(site.slug))
        await server.server.traffic.flush()
        const rest = await trafficOf(server, site.owner.token, site.websiteId, '?granularity=hour')
        const client = await connect(server, site.owner.token, { client: kind, toolsets: 'traffic' })
        try {
          const result = await call(client, 'get_site_traffic', { websiteId: site.websiteId, granularity: 'hour' })
          assert.equal(result.isError, false)
          assert.deepEqual(result.data, rest)
          assert.deepEqual(result.data.totals, expectedTotals(bytes))
          const bad = await call(client, 'get_site_traffic', { websiteId: site.websiteId, from: 'soon' })
          assert.equal(bad.isError, true)
          assert.equal(bad.data.error.code, 'BAD_REQUEST')
          const stranger = await createUser(server)
          const hidden = await connect(server, stranger.token, { client: kind, toolsets: 'traffic' })
          try {
            const none = await call(hidden, 'get_site_traffic', { websiteId: site.websiteId })
            assert.equal(none.data.error.code, 'NOT_FOUND')
          } finally {
            await hidden.close()
          }
        } finally {
          await client.close()
        }
      })
    }
  })
}
