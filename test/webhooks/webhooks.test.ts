/**
 * Managing webhooks over REST, on every store: the owner registers an endpoint (its secret shown
 * once, in the Standard Webhooks form), lists, changes and removes it; editors are refused as
 * owner-only, strangers find nothing; every bad input is refused with its field named and changes
 * nothing; a site has at most WEBHOOKS_PER_SITE. The signature matches the specification's vector.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { WEBHOOKS_PER_SITE } from '../../src/core/limits.ts'
import { signatureOf } from '../../src/webhooks/webhook-signing.ts'
import { assertError, siteWithMembers } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

test('signatures match the Standard Webhooks test vector', () => {
  assert.equal(
    signatureOf('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  )
})

for (const store of STORES) {
  describe(`webhooks over REST (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      // Delivering is the other suite's: here nothing answers, and nothing needs to.
      server = await startTestServer(store.name, { PLINTH_FETCH_ALLOW_HOSTS: 'hooks.internal' })
    })
    after(() => server?.close())

    const path = (websiteId: string, rest = '') => `/v1/websites/${websiteId}/webhooks${rest}`

    test('the owner registers, lists, changes and removes a webhook', async () => {
      const { site, owner } = await siteWithMembers(server)
      const created = await server.api('POST', path(site.websiteId), {
        token: owner.token,
        body: { url: 'https://example.com/hooks/plinth', events: ['version.published', 'entry.changed'], description: 'CI <trigger>' },
      })
      assert.equal(created.status, 201, created.text)
      const hook = created.body
      assert.match(hook.webhookId, /^whk_/)
      assert.equal(hook.url, 'https://example.com/hooks/plinth')
      assert.deepEqual(hook.events, ['version.published', 'entry.changed'])
      assert.equal(hook.description, 'CI <trigger>')
      assert.equal(hook.enabled, true)
      assert.match(hook.createdAt, /^\d{4}-\d\d-\d\dT/)
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
      assert.equal(Buffer.from(hook.secret.slice(6), 'base64').length, 32)

      const listed = await server.api('GET', path(site.websiteId), { token: owner.token })
      assert.equal(listed.status, 200)
      assert.equal(listed.body.items.length, 1)
      assert.equal(listed.body.items[0].webhookId, hook.webhookId)
      assert.equal(listed.body.items[0].secret, undefined, 'the secret is shown once')
      assert.ok(!listed.text.includes(hook.secret.slice(6)))

      const changed = await server.api('PATCH', path(site.websiteId, `/${hook.webhookId}`), {
        token: owner.token,
        body: { url: 'https://example.org/other', events: ['site.deleted'], enabled: false },
      })
      assert.equal(changed.status, 200, changed.text)
      assert.equal(changed.body.url, 'https://example.org/other')
      assert.deepEqual(changed.body.events, ['site.deleted'])
      assert.equal(changed.body.enabled, false)
      assert.equal(changed.body.description, 'CI <trigger>')

      const deliveries = await server.api('GET', path(site.websiteId, `/${hook.webhookId}/deliveries`), { token: owner.token })
      assert.equal(deliveries.status, 200)
      assert.deepEqual(deliveries.body.items, [])

      const removed = await server.api('DELETE', path(site.websiteId, `/${hook.webhookId}`), { token: owner.token })
      assert.equal(removed.status, 204)
      assert.deepEqual((await server.api('GET', path(site.websiteId), { token: owner.token })).body.items, [])
      assertError(await server.api('DELETE', path(site.websiteId, `/${hook.webhookId}`), { token: owner.token }), 404, 'NOT_FOUND')
    })

    test('editors are refused as owner-only and strangers find nothing', async () => {
      const { site, owner, editor, stranger } = await siteWithMembers(server)
      const body = { url: 'https://example.com/h', events: ['site.deleted'] }
      const hook = (await server.api('POST', path(site.websiteId), { token: owner.token, body })).body
      const calls: Array<[string, string, unknown?]> = [
        ['POST', path(site.websiteId), body],
        ['GET', path(site.websiteId)],
        ['PATCH', path(site.websiteId, `/${hook.webhookId}`), { enabled: false }],
        ['DELETE', path(site.websiteId, `/${hook.webhookId}`)],
        ['GET', path(site.websiteId, `/${hook.webhookId}/deliveries`)],
        ['POST', path(site.websiteId, `/${hook.webhookId}/deliveries/dlv_x/redeliver`)],
      ]
      for (const [method, url, payload] of calls) {
        assertError(await server.api(method, url, { token: editor.token, body: payload }), 403, 'OWNER_ONLY', /owner/)
        assertError(await server.api(method, url, { token: stranger.token, body: payload }), 404, 'NOT_FOUND')
        assertError(await server.api(method, url, { body: payload }), 401, 'AUTH_REQUIRED')
      }
      const listed = await server.api('GET', path(site.websiteId), { token: owner.token })
      assert.equal(listed.body.items.length, 1)
      assert.equal(listed.body.items[0].enabled, true, 'nothing changed')
    })

    test('every bad input is refused with its field named, and changes nothing', async () => {
      const { site, owner } = await siteWithMembers(server)
      const good = { url: 'https://example.com/h', events: ['version.promoted'] }
      const hook = (await server.api('POST', path(site.websiteId), { token: owner.token, body: good })).body
      const refusals: Array<[unknown, string, RegExp?]> = [
        [{ ...good, url: 'http://example.com/h' }, 'url', /https/],
        [{ ...good, url: 'ftp://example.com/h' }, 'url', /https/],
        [{ ...good, url: 'not a url' }, 'url'],
        [{ ...good, url: '/relative' }, 'url'],
        [{ ...good, url: 'https://user:pw@example.com/h' }, 'url', /password/],
        [{ ...good, url: 'https://example.com/h#part' }, 'url', /fragment/],
        [{ ...good, url: 'https://10.1.2.3/h' }, 'url', /public address/],
        [{ ...good, url: 'https://[::1]:8443/h' }, 'url', /public address/],
        [{ ...good, url: 'https://169.254.169.254/latest/meta-data' }, 'url', /public address/],
        [{ ...good, url: `https://example.com/${'a'.repeat(2100)}` }, 'url'],
        [{ ...good, events: [] }, 'events'],
        [{ ...good, events: ['version.deleted'] }, 'events'],
        [{ ...good, events: ['site.deleted', 'site.deleted'] }, 'events'],
        [{ ...good, events: 'site.deleted' }, 'events'],
        [{ ...good, description: 'x'.repeat(501) }, 'description'],
        [{ ...good, secret: 'whsec_mine' }, 'secret'],
        [{ url: good.url }, 'events'],
      ]
      for (const [body, field, message] of refusals) {
        const res = await server.api('POST', path(site.websiteId), { token: owner.token, body })
        assertError(res, 422, 'VALIDATION_FAILED', message)
        assert.ok(
          Object.keys(res.body.error.fields ?? {}).some((f) => f.includes(field)),
          `${field} is named: ${res.text}`,
        )
        const patched = await server.api('PATCH', path(site.websiteId, `/${hook.webhookId}`), { token: owner.token, body })
        assert.equal(patched.status, field === 'events' && !('events' in (body as object)) ? 200 : 422, patched.text)
      }
      assertError(await server.api('PATCH', path(site.websiteId, `/${hook.webhookId}`), { token: owner.token, body: {} }), 422, 'VALIDATION_FAILED')
      assertError(
        await server.api('PATCH', path(site.websiteId, `/${hook.webhookId}`), { token: owner.token, body: { enabled: 'no' } }),
        422,
        'VALIDATION_FAILED',
      )
      assertError(await server.api('POST', path(site.websiteId), { token: owner.token, body: '{"url":' }), 400, 'INVALID_JSON')
      const listed = (await server.api('GET', path(site.websiteId), { token: owner.token })).body.items
      assert.equal(listed.length, 1, 'no webhook was added')
      // The one PATCH that was valid (a url alone) changed the url; nothing else did.
      assert.deepEqual(listed[0].events, ['version.promoted'])
      assert.equal(listed[0].enabled, true)
    })

    test('http is taken only for hosts the operator allows', async () => {
      const { site, owner } = await siteWithMembers(server)
      const res = await server.api('POST', path(site.websiteId), {
        token: owner.token,
        body: { url: 'http://hooks.internal:8080/in', events: ['site.deleted'] },
      })
      assert.equal(res.status, 201, res.text)
      assertError(
        await server.api('POST', path(site.websiteId), { token: owner.token, body: { url: 'http://hooks.elsewhere/in', events: ['site.deleted'] } }),
        422,
        'VALIDATION_FAILED',
      )
    })

    test(`a site has at most ${WEBHOOKS_PER_SITE} webhooks`, async () => {
      const { site, owner } = await siteWithMembers(server)
      for (let i = 0; i < WEBHOOKS_PER_SITE; i++) {
        const res = await server.api('POST', path(site.websiteId), { token: owner.token, body: { url: `https://example.com/${i}`, events: ['site.deleted'] } })
        assert.equal(res.status, 201, res.text)
      }
      const over = await server.api('POST', path(site.websiteId), { token: owner.token, body: { url: 'https://example.com/more', events: ['site.deleted'] } })
      assertError(over, 422, 'VALIDATION_FAILED', new RegExp(`at most ${WEBHOOKS_PER_SITE}`))
      assert.equal((await server.api('GET', path(site.websiteId), { token: owner.token })).body.items.length, WEBHOOKS_PER_SITE)
    })

    test('the OpenAPI document describes the webhook operations', async () => {
      const doc = (await server.api('GET', '/openapi.json')).body
      const ops = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((p) =>
        Object.values(p).map((o) => o.operationId),
      )
      for (const id of ['createWebhook', 'listWebhooks', 'updateWebhook', 'deleteWebhook', 'listWebhookDeliveries', 'redeliverWebhookDelivery'])
        assert.ok(ops.includes(id), id)
      assert.ok(doc.components.schemas.CreatedWebhook)
      assert.ok(doc.components.schemas.Delivery)
    })
  })
}
