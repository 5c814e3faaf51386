/**
 * Deliveries across restarts and instances, against a receiver on loopback: a server stopped
 * with a delivery pending (or in flight: it is cut off and given back, not counted) leaves it to
 * the next server on the same store, which delivers it; two instances on one PostgreSQL database
 * send every delivery exactly once between them.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FIELDS } from '../helpers/content.ts'
import { createSite, createUser } from '../helpers/factories.ts'
import { startOnStore, type TestServer, testConfig } from '../helpers/server.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'
import { assertSigned, eventually, Receiver } from './receiver.ts'

const ENV = {
  PLINTH_FETCH_ALLOW_HOSTS: '127.0.0.1',
  // Retries far enough apart that the first server stops before it sends the next.
  PLINTH_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
  PLINTH_WEBHOOK_POLL_MS: '20',
  PLINTH_WEBHOOK_TIMEOUT_MS: '5000',
}

/** Servers on one store: each closed by the test, the store disposed of once at the end. */
function serversOn(store: TestStore) {
  const config = testConfig(store.dataDir, { ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}), ...ENV })
  const kept = { ...store, dispose: () => Promise.resolve() }
  return () => startOnStore(kept, config)
}

for (const store of STORES) {
  describe(`deliveries across restarts (${store.name})`, { skip: store.skip }, () => {
    let receiver: Receiver
    let testStore: TestStore
    before(async () => {
      receiver = await Receiver.start()
      testStore = await createStore(store.name)
    })
    after(async () => {
      await receiver?.close()
      await testStore?.dispose()
    })

    async function siteWithWebhook(server: TestServer, path: string) {
      const owner = await createUser(server)
      const { websiteId } = await createSite(server, { owner })
      const res = await server.api('POST', `/v1/websites/${websiteId}/webhooks`, {
        token: owner.token,
        body: { url: receiver.origin + path, events: ['version.published'] },
      })
      assert.equal(res.status, 201, res.text)
      return { owner, websiteId, hook: res.body }
    }
    const publish = async (server: TestServer, token: string, websiteId: string) => {
      const res = await server.api('POST', `/v1/websites/${websiteId}/versions`, {
        token,
        body: { files: [{ path: 'index.html', content: '<!doctype html><title>v</title>' }] },
      })
      assert.equal(res.status, 201, res.text)
    }
    const logOf = async (server: TestServer, token: string, websiteId: string, webhookId: string) =>
      (await server.api('GET', `/v1/websites/${websiteId}/webhooks/${webhookId}/deliveries`, { token })).body.items as any[]

    test('a delivery pending when the server stops is delivered by the next one', async () => {
      const start = serversOn(testStore)
      const first = await start()
      receiver.fallbacks.set('/restart', 503)
      const { owner, websiteId, hook } = await siteWithWebhook(first, '/restart')
      await publish(first, owner.token, websiteId)
      await eventually(
        () => logOf(first, owner.token, websiteId, hook.webhookId),
        (items) => items[0]?.attempts === 1,
      )
      await first.server.close()
      const refused = receiver.to('/restart').length
      receiver.fallbacks.delete('/restart')

      const second = await start()
      try {
        const [delivered] = await eventually(
          () => logOf(second, owner.token, websiteId, hook.webhookId),
          (items) => items[0]?.status === 'delivered',
        )
        assert.equal(delivered.attempts, refused + 1)
        const got = receiver.to('/restart')
        assert.equal(got.length, refused + 1)
        assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1)
        assertSigned(got.at(-1)!, hook.secret)
      } finally {
        await second.server.close()
      }
    })

    test('a delivery in flight when the server stops is given back, not counted, and sent by the next', async () => {
      const start = serversOn(testStore)
      const first = await start()
      receiver.answer('/cut', 'hang')
      const { owner, websiteId, hook } = await siteWithWebhook(first, '/cut')
      await publish(first, owner.token, websiteId)
      await receiver.waitFor('/cut', 1)
      // Stops while the receiver holds the request: the attempt is cut off.
      await first.server.close()
      const second = await start()
      try {
        const [delivered] = await eventually(
          () => logOf(second, owner.token, websiteId, hook.webhookId),
          (items) => items[0]?.status === 'delivered',
        )
        assert.equal(delivered.attempts, 1, 'the cut-off attempt is not counted')
        const got = receiver.to('/cut')
        assert.equal(got.length, 2)
        assert.equal(got[0]!.headers['webhook-id'], got[1]!.headers['webhook-id'])
      } finally {
        await second.server.close()
      }
    })
  })
}

const postgres = STORES.find((s) => s.name === 'postgres')!
describe('two instances on one PostgreSQL database', { skip: postgres.skip }, () => {
  let receiver: Receiver
  let testStore: TestStore
  let servers: TestServer[] = []
  before(async () => {
    receiver = await Receiver.start()
    testStore = await createStore('postgres')
    const start = serversOn(testStore)
    servers = [await start(), await start()]
  })
  after(async () => {
    for (const server of servers) await server.server.close()
    await receiver?.close()
    await testStore?.dispose()
  })

  test('send each delivery exactly once between them', async () => {
    const [a, b] = servers as [TestServer, TestServer]
    const owner = await createUser(a)
    const { websiteId } = await createSite(a, { owner })
    const hooks = []
    for (const path of ['/one', '/two']) {
      const res = await a.api('POST', `/v1/websites/${websiteId}/webhooks`, {
        token: owner.token,
        body: { url: receiver.origin + path, events: ['entry.changed'] },
      })
      assert.equal(res.status, 201, res.text)
      hooks.push(res.body)
    }
    assert.equal(
      (await b.api('POST', `/v1/websites/${websiteId}/collections`, { token: owner.token, body: { name: 'posts', label: 'Posts', fields: FIELDS } })).status,
      201,
    )
    const base = `/v1/websites/${websiteId}/collections/posts/entries/batch`
    // Events recorded through both instances, in batches, while both senders look for due deliveries.
    for (let round = 0; round < 4; round++) {
      const via = round % 2 === 0 ? a : b
      const entries = Array.from({ length: 10 }, (_, i) => ({ slug: `e-${round}-${i}`, data: { title: `Entry ${round}.${i}` } }))
      const res = await via.api('POST', base, { token: owner.token, body: { entries } })
      assert.equal(res.status, 200, res.text)
    }
    for (const path of ['/one', '/two']) await receiver.waitFor(path, 40)
    await new Promise((resolve) => setTimeout(resolve, 500))
    for (const [i, path] of ['/one', '/two'].entries()) {
      const got = receiver.to(path)
      assert.equal(got.length, 40, `${path} got each event once`)
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 40)
      for (const request of got) assertSigned(request, hooks[i].secret)
    }
    const log = (await a.api('GET', `/v1/websites/${websiteId}/webhooks/${hooks[0].webhookId}/deliveries`, { token: owner.token })).body.items as any[]
    assert.equal(log.length, 40)
    assert.ok(log.every((d) => d.status === 'delivered' && d.attempts === 1))
  })
})
