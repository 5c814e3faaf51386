/**
 * E-mail of each submission, delivered to a real SMTP server on loopback (the smtp-server
 * package) with credentials: from PLINTH_MAIL_FROM, never from the visitor; the visitor's
 * validated address as Reply-To; every value escaped in the HTML part.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { type Mail, quotedPrintable, TestSmtp } from '../helpers/smtp.ts'
import { STORES } from '../helpers/stores.ts'

for (const store of STORES) {
  describe(`form submission e-mail (${store.name})`, { skip: store.skip }, () => {
    let smtp: TestSmtp
    let received: Mail[]
    let server: TestServer
    before(async () => {
      smtp = await TestSmtp.start()
      received = smtp.received
      server = await startTestServer(store.name, {
        PLINTH_SMTP_URL: smtp.url,
        PLINTH_MAIL_FROM: 'Plinth Forms <forms@plinth.test>',
        PLINTH_FORM_RATE_PER_ADDRESS: '1000',
      })
    })
    after(async () => {
      await server?.close()
      await smtp?.close()
    })

    const nextMessage = async (count: number): Promise<Mail> => {
      for (let i = 0; i < 500 && received.length < count; i++) await sleep(20)
      assert.ok(received.length >= count, 'the message arrived')
      return received[count - 1]!
    }

    test('each submission is e-mailed to the owner from the configured address, the visitor only as Reply-To, values escaped', async () => {
      const owner = await server.user('owner-mail@example.com')
      const created = await server.api('POST', '/v1/websites', {
        token: owner.token,
        body: { category: 'restaurant', name: 'Chez Mail', files: restaurantBundle() },
      })
      assert.equal(created.status, 201, created.text)
      const hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
      const res = await postForm(
        server,
        created.body.slug,
        '/_forms/booking',
        urlencoded({ name: hostile, email: 'Guest@Example.com', from: 'spoof@evil.example', notes: 'Table for 2\nBcc: victim@example.com' }),
        { accept: 'application/json' },
      )
      assert.equal(res.status, 201, res.text)
      const message = await nextMessage(1)
      assert.equal(message.from, 'forms@plinth.test')
      assert.deepEqual(message.to, ['owner-mail@example.com'])
      const [head, ...bodyParts] = message.raw.split(/\r\n\r\n/)
      assert.match(head!, /^From: Plinth Forms <forms@plinth\.test>$/m)
      assert.match(head!, /^Reply-To: guest@example\.com$/m)
      assert.match(head!, /^Subject: New booking submission on Chez Mail$/m)
      assert.doesNotMatch(head!, /evil\.example|victim/)
      const body = quotedPrintable(bodyParts.join('\r\n\r\n'))
      assert.ok(body.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;'), body)
      // The raw value appears once, in the plain-text part only.
      assert.equal(body.split('<script>alert').length, 2, body)
      assert.ok(body.includes(`/dashboard/sites/${created.body.websiteId}/forms/booking`))
    })

    test('a visitor without a valid address gives no Reply-To; the owner may choose other recipients', async () => {
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      const set = await server.api('PUT', `/v1/websites/${created.body.websiteId}/form-settings`, {
        token: owner.token,
        body: { notify: ['bookings@example.com', 'chef@example.com'], retentionDays: null },
      })
      assert.equal(set.status, 200, set.text)
      const before = received.length
      const res = await postForm(server, created.body.slug, '/_forms/booking', urlencoded({ name: 'Anon', email: 'x@y.z\r\nBcc: victim@example.com' }))
      assert.equal(res.status, 303)
      const message = await nextMessage(before + 1)
      assert.deepEqual(message.to.sort(), ['bookings@example.com', 'chef@example.com'])
      assert.doesNotMatch(message.raw.split('\r\n\r\n')[0]!, /^(Reply-To|Bcc):/im)
    })
  })
}
