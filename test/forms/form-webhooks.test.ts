/**
 * `form.submitted` on every store, delivered to a receiver on loopback: a stored submission
 * arrives signed with the webhook's secret, with its form, id, answers and its files described but
 * not their bytes; a post the honeypot drops, a refused post and a post to a site no webhook
 * listens to send nothing, and marking a submission as spam sends nothing either.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { multipart, postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { assertSigned, eventually, Receiver } from '../webhooks/receiver.ts'

const ENV = {
  PLINTH_FETCH_ALLOW_HOSTS: '127.0.0.1',
  PLINTH_WEBHOOK_RETRY_SCHEDULE: '0.05,0.2,0.4',
  PLINTH_WEBHOOK_POLL_MS: '20',
  PLINTH_WEBHOOK_TIMEOUT_MS: '3000',
  PLINTH_FORM_RATE_PER_SITE: '1000000',
  PLINTH_FORM_RATE_PER_ADDRESS: '1000000',
}

for (const store of STORES) {
  describe(`form.submitted webhooks (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let receiver: Receiver
    before(async () => {
      receiver = await Receiver.start()
      server = await startTestServer(store.name, ENV)
    })
    after(async () => {
      await server?.close()
      await receiver?.close()
    })

    async function restaurant() {
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      return { owner, websiteId: created.body.websiteId as string, slug: created.body.slug as string }
    }

    test('a stored submission arrives signed, with its answers and its files described; the honeypot and refusals send nothing', async () => {
      const site = await restaurant()
      const hook = await server.api('POST', `/v1/websites/${site.websiteId}/webhooks`, {
        token: site.owner.token,
        body: { url: `${receiver.origin}/forms`, events: ['form.submitted'] },
      })
      assert.equal(hook.status, 201, hook.text)
      const secret = hook.body.secret as string

      // Dropped by the honeypot, refused as incomplete: neither is stored, neither is an event.
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Bot', _gotcha: 'http://spam.example' }))).status, 303)
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ party: '2' }), { accept: 'application/json' })).status, 422)

      const bytes = Buffer.from('%PDF-1.4 no shellfish\n')
      const { body, contentType } = await multipart([
        ['name', '<b>Ada</b>'],
        ['email', 'ada@example.com'],
        ['party', '4'],
        ['_next', '/booked.html'],
        ['menu', { filename: 'wishes.pdf', type: 'application/pdf', bytes }],
      ])
      const posted = await postForm(server, site.slug, '/_forms/booking', body, { contentType, accept: 'application/json' })
      assert.equal(posted.status, 201, posted.text)
      const submissionId = posted.json.submissionId as string

      const [delivery, ...more] = await receiver.waitFor('/forms', 1)
      assert.equal(more.length, 0)
      assertSigned(delivery!, secret)
      const event = delivery!.json
      assert.equal(event.type, 'form.submitted')
      assert.equal(event.websiteId, site.websiteId)
      assert.match(event.id, /^evt_/)
      assert.equal(delivery!.headers['webhook-id'], event.id)
      const { versionId, createdAt, ...data } = event.data
      assert.match(versionId, /^job_/)
      assert.ok(!Number.isNaN(Date.parse(createdAt)))
      assert.deepEqual(data, {
        form: 'booking',
        submissionId,
        fields: { name: '<b>Ada</b>', email: 'ada@example.com', party: '4' },
        files: [{ field: 'menu', filename: 'wishes.pdf', contentType: 'application/pdf', size: bytes.length }],
      })
      assert.doesNotMatch(delivery!.body, /no shellfish/, 'the bytes of a file are never sent')
      const stored = await server.api('GET', `/v1/websites/${site.websiteId}/forms/booking/submissions/${submissionId}`, { token: site.owner.token })
      assert.equal(stored.body.createdAt, createdAt)

      // Marking it as spam is the owner's judgement: no event.
      const spam = await server.api('PATCH', `/v1/websites/${site.websiteId}/forms/booking/submissions/${submissionId}`, {
        token: site.owner.token,
        body: { spam: true },
      })
      assert.equal(spam.status, 200, spam.text)
      // The sender records the answer after the receiver has it.
      const deliveries = await eventually(
        async () =>
          (await server.api('GET', `/v1/websites/${site.websiteId}/webhooks/${hook.body.webhookId}/deliveries`, { token: site.owner.token })).body
            .items as any[],
        (items) => items.every((d) => d.status !== 'pending'),
      )
      assert.deepEqual(
        deliveries.map((d) => [d.event, d.status]),
        [['form.submitted', 'delivered']],
      )
      const events = await server.server.db.kysely.selectFrom('webhook_events').select('type').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(
        events.map((e) => e.type),
        ['form.submitted'],
      )
    })

    test('a site whose webhooks did not ask for form.submitted records no event for its submissions', async () => {
      const site = await restaurant()
      const hook = await server.api('POST', `/v1/websites/${site.websiteId}/webhooks`, {
        token: site.owner.token,
        body: { url: `${receiver.origin}/other`, events: ['version.published'] },
      })
      assert.equal(hook.status, 201, hook.text)
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Grace' }), { accept: 'application/json' })).status, 201)
      const events = await server.server.db.kysely.selectFrom('webhook_events').select('type').where('website_id', '=', site.websiteId).execute()
      assert.deepEqual(events, [])
    })
  })
}
