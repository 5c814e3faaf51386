/**
 * One owner's slow webhook endpoints never hold up another's deliveries: each delivery takes a
 * sending slot of its own, a webhook has one delivery in flight at a time and a website at most
 * WEBHOOK_SEND_PER_WEBSITE, so a site whose endpoints never answer leaves the other slots to the
 * other sites. The endpoints here hang until the suite ends, and the sender's time limit is longer
 * than the suite: with a sender that waited for a whole batch, the other site's delivery would not
 * come before it (the time limit here is the longest a setting allows, 60 s).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { WEBHOOK_SEND_PER_WEBSITE } from '../../src/core/limits.ts'
import { createSite, createVersion } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { eventually, Receiver } from './receiver.ts'

const SLOW_WEBHOOKS = 10

for (const store of STORES) {
  describe(`webhook deliveries across websites (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let receiver: Receiver
    before(async () => {
      receiver = await Receiver.start()
      server = await startTestServer(store.name, {
        PLINTH_FETCH_ALLOW_HOSTS: '127.0.0.1',
        PLINTH_WEBHOOK_POLL_MS: '20',
        PLINTH_WEBHOOK_TIMEOUT_MS: '60000',
      })
    })
    after(async () => {
      await server?.close()
      await receiver?.close()
    })

    const register = async (token: string, websiteId: string, path: string) => {
      const res = await server.api('POST', `/v1/websites/${websiteId}/webhooks`, {
        token,
        body: { url: receiver.origin + path, events: ['version.published'] },
      })
      assert.equal(res.status, 201, res.text)
    }
    const slowRequests = () => receiver.received.filter((r) => r.path.startsWith('/slow')).length

    test("a site whose endpoints never answer holds at most its share of the sender; another site's delivery comes meanwhile", async () => {
      const slow = await createSite(server)
      for (let i = 0; i < SLOW_WEBHOOKS; i++) {
        receiver.fallbacks.set(`/slow${i}`, 'hang')
        await register(slow.owner.token, slow.websiteId, `/slow${i}`)
      }
      for (let i = 0; i < 3; i++) await createVersion(server, slow.owner, slow.websiteId)
      await eventually(
        () => Promise.resolve(slowRequests()),
        (count) => count >= WEBHOOK_SEND_PER_WEBSITE,
      )

      const other = await createSite(server)
      await register(other.owner.token, other.websiteId, '/other')
      const published = await createVersion(server, other.owner, other.websiteId)
      const [delivered] = await receiver.waitFor('/other', 1)
      assert.equal(delivered!.json.data.version, published.version)
      // The slow site's deliveries still hang, and no more of them were started than its share.
      assert.equal(slowRequests(), WEBHOOK_SEND_PER_WEBSITE)
      assert.equal(new Set(receiver.received.filter((r) => r.path.startsWith('/slow')).map((r) => r.path)).size, WEBHOOK_SEND_PER_WEBSITE, 'one a webhook')
    })
  })
}
