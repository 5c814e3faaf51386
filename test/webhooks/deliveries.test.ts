/**
 * Webhook deliveries against a receiver on loopback (allowed by PLINTH_FETCH_ALLOW_HOSTS), on
 * every store, with a short retry schedule: each event type arrives with its data, signed with
 * the webhook's secret; a 500 and a timeout are retried after growing waits with the same
 * webhook-id, and the last failure fails the delivery; an endpoint on a private address is never
 * reached unless allowed; the delivery log tells all of it, and a delivery can be sent again. The
 * waits are asserted only as lower bounds: a sender never sends early.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createVersion, siteWithMembers } from '../helpers/factories.ts'
import { FIELDS } from '../helpers/content.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { assertSigned, eventually, Receiver } from './receiver.ts'

/** Waits between attempts, in seconds: a retry after 50 ms, 200 ms, then 400 ms; four attempts in all. */
const SCHEDULE = [0.05, 0.2, 0.4]
export const DELIVERY_ENV = {
  PLINTH_FETCH_ALLOW_HOSTS: '127.0.0.1',
  PLINTH_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
  PLINTH_WEBHOOK_POLL_MS: '20',
  // Long enough that a server busy publishing still reads a quick answer in time (a late read is a failed attempt, sent again).
  PLINTH_WEBHOOK_TIMEOUT_MS: '3000',
}

for (const store of STORES) {
  describe(`webhook deliveries (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let receiver: Receiver
    before(async () => {
      receiver = await Receiver.start()
      server = await startTestServer(store.name, DELIVERY_ENV)
    })
    after(async () => {
      await server?.close()
      await receiver?.close()
    })

    async function register(token: string, websiteId: string, path: string, events: string[], url = receiver.origin + path) {
      const res = await server.api('POST', `/v1/websites/${websiteId}/webhooks`, { token, body: { url, events } })
      assert.equal(res.status, 201, res.text)
      return res.body as { webhookId: string; secret: string }
    }
    const log = async (token: string, websiteId: string, webhookId: string) => {
      const res = await server.api('GET', `/v1/websites/${websiteId}/webhooks/${webhookId}/deliveries`, { token })
      assert.equal(res.status, 200, res.text)
      return res.body.items as any[]
    }

    test('each event arrives signed with its data; a webhook gets only the events it asked for', async () => {
      const { site, owner } = await siteWithMembers(server, { name: 'Events' })
      const id = site.websiteId
      const all = await register(owner.token, id, '/all', ['version.published', 'version.promoted', 'site.deleted', 'entry.changed', 'form.submitted'])
      const onlyDeleted = await register(owner.token, id, '/deleted', ['site.deleted'])

      const v2 = await createVersion(server, owner, id)
      const v3 = await createVersion(server, owner, id, { promote: false })
      assert.equal((await server.api('POST', `/v1/websites/${id}/versions/${v3.version}/promote`, { token: owner.token })).status, 200)
      const posts = `/v1/websites/${id}/collections/posts/entries`
      assert.equal(
        (await server.api('POST', `/v1/websites/${id}/collections`, { token: owner.token, body: { name: 'posts', label: 'Posts', fields: FIELDS } })).status,
        201,
      )
      assert.equal((await server.api('PUT', `${posts}/hello`, { token: owner.token, body: { data: { title: 'Hello' } } })).status, 201)
      assert.equal((await server.api('PUT', `${posts}/hello`, { token: owner.token, body: { data: { title: 'Hello again' } } })).status, 200)
      const batch = await server.api('POST', `${posts}/batch`, {
        token: owner.token,
        body: {
          entries: [
            { slug: 'a', data: { title: 'A' } },
            { slug: 'b', data: { title: 'B' } },
          ],
        },
      })
      assert.equal(batch.status, 200, batch.text)
      assert.equal((await server.api('DELETE', `${posts}/hello`, { token: owner.token })).status, 204)
      assert.equal((await server.api('DELETE', `/v1/websites/${id}`, { token: owner.token })).status, 204)

      const got = await receiver.waitFor('/all', 10)
      for (const request of got) {
        assertSigned(request, all.secret)
        assert.equal(request.headers['content-type'], 'application/json')
        assert.equal(request.json.id, request.headers['webhook-id'])
        assert.match(request.json.id, /^evt_/)
        assert.equal(request.json.websiteId, id)
        assert.match(request.json.createdAt, /^\d{4}-\d\d-\d\dT/)
        assert.deepEqual(Object.keys(request.json).sort(), ['createdAt', 'data', 'id', 'type', 'websiteId'])
      }
      const of = (type: string) => got.filter((r) => r.json.type === type).map((r) => r.json.data)
      const byVersion = (a: any, b: any) => a.version - b.version
      assert.deepEqual(
        of('version.published')
          .sort(byVersion)
          .map((d) => [d.versionId, d.version, d.isCurrent]),
        [
          [v2.jobId, v2.version, true],
          [v3.jobId, v3.version, false],
        ],
      )
      assert.match(of('version.published')[0].pageUrl, new RegExp(`^http://${site.slug}\\.`))
      assert.ok(of('version.published').every((d) => d.previewUrl.includes(`--v${d.version}.`)))
      assert.deepEqual(
        of('version.promoted')
          .sort(byVersion)
          .map((d) => [d.versionId, d.version]),
        [
          [v2.jobId, v2.version],
          [v3.jobId, v3.version],
        ],
      )
      const entries = of('entry.changed').map((d) => `${d.collection}/${d.slug}:${d.change}`)
      assert.deepEqual(entries.sort(), ['posts/a:created', 'posts/b:created', 'posts/hello:created', 'posts/hello:deleted', 'posts/hello:updated'])
      assert.ok(of('entry.changed').every((d) => /^ent_/.test(d.entryId)))
      assert.deepEqual(of('site.deleted'), [{ slug: site.slug, name: 'Events' }])

      const deleted = await receiver.waitFor('/deleted', 1)
      assertSigned(deleted[0]!, onlyDeleted.secret)
      assert.equal(deleted[0]!.json.type, 'site.deleted')
      // Nothing more arrives for either: every event was sent once.
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(receiver.to('/all').length, 10)
      assert.equal(receiver.to('/deleted').length, 1)
      assert.equal(new Set(receiver.to('/all').map((r) => r.json.id)).size, 10)
    })

    test('a 500 is retried after growing waits with the same webhook-id, and the log tells it', async () => {
      const { site, owner } = await siteWithMembers(server)
      receiver.answer('/flaky', 500, 503, 200)
      const hook = await register(owner.token, site.websiteId, '/flaky', ['version.published'])
      await createVersion(server, owner, site.websiteId)
      const got = await receiver.waitFor('/flaky', 3)
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt')
      assert.equal(new Set(got.map((r) => r.body)).size, 1, 'one body for every attempt')
      for (const request of got) assertSigned(request, hook.secret)
      assert.ok(got[1]!.at - got[0]!.at >= SCHEDULE[0]! * 1000, 'the first retry waits its turn')
      assert.ok(got[2]!.at - got[1]!.at >= SCHEDULE[1]! * 1000, 'the second waits longer')
      const [delivery] = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (items) => items[0]?.status === 'delivered',
      )
      assert.match(delivery.deliveryId, /^dlv_/)
      assert.equal(delivery.event, 'version.published')
      assert.equal(delivery.eventId, got[0]!.json.id)
      assert.equal(delivery.attempts, 3)
      assert.equal(delivery.lastStatusCode, 200)
      assert.equal(delivery.nextAttemptAt, null)
    })

    test('an endpoint that never answers is cut off, retried, and failed after the last attempt', async () => {
      const { site, owner } = await siteWithMembers(server)
      receiver.answer('/slow', 'hang')
      receiver.fallbacks.set('/slow', 500)
      const hook = await register(owner.token, site.websiteId, '/slow', ['version.published'])
      await createVersion(server, owner, site.websiteId)
      const pending = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (items) => items[0]?.attempts >= 1,
      )
      assert.equal(pending[0].status, 'pending')
      assert.match(pending[0].lastError, /longer than 3000 ms/)
      assert.equal(pending[0].lastStatusCode, null)
      assert.ok(Date.parse(pending[0].nextAttemptAt) >= Date.parse(pending[0].lastAttemptAt) + SCHEDULE[0]! * 1000)
      const [failed] = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (items) => items[0]?.status === 'failed',
      )
      assert.equal(failed.attempts, SCHEDULE.length + 1)
      assert.equal(failed.lastStatusCode, 500)
      assert.equal(failed.nextAttemptAt, null)
      const got = receiver.to('/slow')
      assert.equal(got.length, SCHEDULE.length + 1)
      for (let i = 1; i < got.length; i++) assert.ok(got[i]!.at - got[i - 1]!.at >= SCHEDULE[i - 1]! * 1000, `wait ${i} is at least ${SCHEDULE[i - 1]} s`)
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1)
    })

    test('a failed delivery is sent again on request, as a new delivery with the same webhook-id', async () => {
      const { site, owner, editor } = await siteWithMembers(server)
      receiver.fallbacks.set('/again', 500)
      const hook = await register(owner.token, site.websiteId, '/again', ['version.published'])
      await createVersion(server, owner, site.websiteId)
      const [failed] = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (items) => items[0]?.status === 'failed',
      )
      receiver.fallbacks.set('/again', 200)
      const url = `/v1/websites/${site.websiteId}/webhooks/${hook.webhookId}/deliveries/${failed.deliveryId}/redeliver`
      assert.equal((await server.api('POST', url, { token: editor.token })).status, 403)
      const missing = await server.api('POST', url.replace(failed.deliveryId, 'dlv_nothing'), { token: owner.token })
      assert.equal(missing.status, 404)
      const again = await server.api('POST', url, { token: owner.token })
      assert.equal(again.status, 202, again.text)
      assert.notEqual(again.body.deliveryId, failed.deliveryId)
      assert.equal(again.body.eventId, failed.eventId)
      assert.equal(again.body.status, 'pending')
      assert.equal(again.body.attempts, 0)
      const items = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (list) => list.length === 2 && list[0].status === 'delivered',
      )
      assert.equal(items[0].deliveryId, again.body.deliveryId)
      assert.equal(items[1].deliveryId, failed.deliveryId)
      assert.equal(items[1].status, 'failed')
      const got = receiver.to('/again')
      assert.equal(got.at(-1)!.headers['webhook-id'], failed.eventId)
      assertSigned(got.at(-1)!, hook.secret)
    })

    test('an endpoint that resolves to a private address is never reached', async () => {
      const { site, owner } = await siteWithMembers(server)
      // localhost is not in PLINTH_FETCH_ALLOW_HOSTS (127.0.0.1 is), and names are checked when they connect.
      const port = new URL(receiver.origin).port
      const hook = await register(owner.token, site.websiteId, '/private', ['version.published'], `https://localhost:${port}/private`)
      await createVersion(server, owner, site.websiteId)
      const [failed] = await eventually(
        () => log(owner.token, site.websiteId, hook.webhookId),
        (items) => items[0]?.status === 'failed',
      )
      assert.match(failed.lastError, /blocked/)
      assert.match(failed.lastError, /PLINTH_FETCH_ALLOW_HOSTS/)
      assert.equal(failed.lastStatusCode, null)
      assert.equal(receiver.to('/private').length, 0)
      // The allowed address itself as a literal may be used; another private one may not.
      const refused = await server.api('POST', `/v1/websites/${site.websiteId}/webhooks`, {
        token: owner.token,
        body: { url: `https://127.0.0.2:${port}/private`, events: ['site.deleted'] },
      })
      assert.equal(refused.status, 422, refused.text)
      assert.match(refused.body.error.fields.url, /public address/)
    })

    test('a paused webhook is sent nothing new; its removal stops what is pending', async () => {
      const { site, owner } = await siteWithMembers(server)
      const hook = await register(owner.token, site.websiteId, '/paused', ['version.published'])
      const patch = (body: unknown) => server.api('PATCH', `/v1/websites/${site.websiteId}/webhooks/${hook.webhookId}`, { token: owner.token, body })
      assert.equal((await patch({ enabled: false })).status, 200)
      await createVersion(server, owner, site.websiteId, { files: bundle('Paused') })
      assert.deepEqual(await log(owner.token, site.websiteId, hook.webhookId), [], 'no event is recorded for a paused webhook')
      assert.equal((await patch({ enabled: true })).status, 200)
      await createVersion(server, owner, site.websiteId, { files: bundle('Resumed') })
      await receiver.waitFor('/paused', 1)
      assert.equal(receiver.to('/paused')[0]!.json.data.version, 3)
    })
  })
}
