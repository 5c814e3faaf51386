/**
 * The daily digest, delivered to a real SMTP server on loopback: sites set to `daily` send no
 * e-mail per submission; the next day one message per address covers every site that e-mails it
 * (spam left out, values escaped), a site on `each` is not in it, and a day is sent once however
 * many times or instances run it (two servers on one database race for it). Submissions also count
 * in the site's and the owner's usage.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { DigestRun } from '../../src/forms/form-digest.ts'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { startOnStore, type TestServer, testConfig } from '../helpers/server.ts'
import { quotedPrintable, TestSmtp } from '../helpers/smtp.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const DAY_MS = 24 * 60 * 60 * 1000

for (const store of STORES) {
  describe(`form digest and usage (${store.name})`, { skip: store.skip }, () => {
    let smtp: TestSmtp
    let testStore: TestStore
    let server: TestServer
    let second: TestServer
    before(async () => {
      smtp = await TestSmtp.start()
      testStore = await createStore(store.name)
      const config = testConfig(testStore.dataDir, {
        ...(testStore.databaseUrl ? { DATABASE_URL: testStore.databaseUrl } : {}),
        PLINTH_SMTP_URL: smtp.url,
        PLINTH_MAIL_FROM: 'Plinth Forms <forms@plinth.test>',
        PLINTH_FORM_RATE_PER_ADDRESS: '1000',
      })
      // Two servers on one database and data dir, as two instances are.
      const kept = { ...testStore, dispose: () => Promise.resolve() }
      server = await startOnStore(kept, config)
      second = await startOnStore(kept, config)
    })
    after(async () => {
      await second?.close()
      await server?.close()
      await testStore?.dispose()
      await smtp?.close()
    })

    async function site(owner: { token: string }, name: string, settings?: Record<string, unknown>) {
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', name, files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      const websiteId = created.body.websiteId as string
      if (settings) {
        const set = await server.api('PUT', `/v1/websites/${websiteId}/form-settings`, { token: owner.token, body: settings })
        assert.equal(set.status, 200, set.text)
        assert.equal(set.body.notifyMode, settings.notifyMode ?? 'each')
      }
      return { websiteId, slug: created.body.slug as string }
    }
    const submit = async (slug: string, fields: Record<string, string>) => {
      const res = await postForm(server, slug, '/_forms/booking', urlencoded(fields), { accept: 'application/json' })
      assert.equal(res.status, 201, res.text)
      return res.json.submissionId as string
    }

    test('daily sites are told once the next day, one message per address; a day is sent once among instances', async () => {
      const owner = await server.user('digest-owner@example.com')
      const other = await server.user('each-owner@example.com')
      const bistro = await site(owner, 'Bistro <Digest>', { notify: null, retentionDays: null, notifyMode: 'daily' })
      const cafe = await site(owner, 'Café Digest', { notify: null, retentionDays: null, notifyMode: 'daily' })
      const quiet = await site(owner, 'Quiet Digest', { notify: ['quiet@example.com'], retentionDays: null, notifyMode: 'daily' })
      const each = await site(other, 'Each Time')
      // The mode is kept when a later setting leaves it out.
      const kept = await server.api('PUT', `/v1/websites/${cafe.websiteId}/form-settings`, { token: owner.token, body: { notify: null, retentionDays: null } })
      assert.equal(kept.body.notifyMode, 'daily')
      const bad = await server.api('PUT', `/v1/websites/${cafe.websiteId}/form-settings`, {
        token: owner.token,
        body: { notify: null, retentionDays: null, notifyMode: 'hourly' },
      })
      assert.equal(bad.status, 422, bad.text)
      assert.equal((await server.api('GET', `/v1/websites/${cafe.websiteId}/form-settings`, { token: owner.token })).body.notifyMode, 'daily')

      await submit(bistro.slug, { name: '<script>alert(1)</script>', party: '2' })
      await submit(bistro.slug, { name: 'Ada', party: '4' })
      await submit(cafe.slug, { name: 'Grace', party: '6' })
      const spam = await submit(quiet.slug, { name: 'Buy pills' })
      const marked = await server.api('PATCH', `/v1/websites/${quiet.websiteId}/forms/booking/submissions/${spam}`, {
        token: owner.token,
        body: { spam: true },
      })
      assert.equal(marked.status, 200, marked.text)
      await submit(each.slug, { name: 'Linus' })
      // The site on `each` is e-mailed at once; by then the daily sites' submissions were looked at and sent nothing.
      await smtp.waitFor('each-owner@example.com', 1)
      assert.deepEqual(smtp.to('digest-owner@example.com'), [])

      const day = new Date().toISOString().slice(0, 10)
      const nextMorning = new Date(Date.parse(day) + DAY_MS + 60 * 60 * 1000)
      // Both instances run at once: the day goes to one of them.
      const runs: DigestRun[] = await Promise.all([server.server.formDigest!.run(nextMorning), second.server.formDigest!.run(nextMorning)])
      assert.deepEqual(runs.map((run) => run.day).sort(), [day, day])
      assert.deepEqual(runs.map((run) => run.claimed).sort(), [false, true])
      assert.equal(runs.find((run) => run.claimed)!.messages, 1, 'one address had submissions: the owner; the spam-only site sends nothing')
      assert.deepEqual((await server.server.formDigest!.run(new Date(nextMorning.getTime() + 2 * 60 * 60 * 1000))).claimed, false)

      const [digest] = await smtp.waitFor('digest-owner@example.com', 1)
      assert.deepEqual(smtp.to('quiet@example.com'), [])
      assert.equal(smtp.to('each-owner@example.com').length, 1, 'a site on each is not in the digest')
      assert.equal(digest!.from, 'forms@plinth.test')
      const [head, ...parts] = digest!.raw.split(/\r\n\r\n/)
      assert.match(head!, new RegExp(`^Subject: 3 form submissions on ${day}`, 'm'))
      const body = quotedPrintable(parts.join('\n\n')).replace(/\r\n/g, '\n')
      assert.match(body, /Bistro <Digest>\n {2}booking: 2 new, http:\/\/[^\s]+\/dashboard\/sites\/web_[^/]+\/forms\/booking/)
      assert.match(body, /Café Digest\n {2}booking: 1 new/)
      assert.match(body, /name: Grace · party: 6/)
      assert.doesNotMatch(body, /Buy pills|Linus|Quiet Digest/)
      // The HTML part escapes what visitors and owners typed.
      assert.match(body, /<h2>Bistro &lt;Digest&gt;<\/h2>/)
      assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
      assert.doesNotMatch(body, /<script>alert\(1\)<\/script>[^\n]*<\/li>/)
      const row = await server.server.db.kysely.selectFrom('form_digest_days').selectAll().where('day', '=', day).executeTakeFirstOrThrow()
      assert.equal(Number(row.messages), 1)
      assert.ok(row.finished_at)
    })

    test("submissions count in the site's usage and in the owner's", async () => {
      const owner = await server.user()
      const first = await site(owner, 'Usage One')
      const second = await site(owner, 'Usage Two')
      const fresh = await server.api('GET', `/v1/websites/${first.websiteId}`, { token: owner.token })
      assert.equal(fresh.status, 200, fresh.text)
      assert.deepEqual(fresh.body.usage, { formSubmissions: 0, formSubmissionsLast30Days: 0 })
      const ids = [await submit(first.slug, { name: 'A' }), await submit(first.slug, { name: 'B' })]
      await submit(second.slug, { name: 'C' })
      // The honeypot stores nothing, and so counts nothing.
      assert.equal((await postForm(server, first.slug, '/_forms/booking', urlencoded({ name: 'Bot', _gotcha: 'x' }))).status, 303)
      const got = await server.api('GET', `/v1/websites/${first.websiteId}`, { token: owner.token })
      assert.deepEqual(got.body.usage, { formSubmissions: 2, formSubmissionsLast30Days: 2 })
      const list = await server.api('GET', '/v1/websites', { token: owner.token })
      assert.equal(list.body.websiteLimits.formSubmissions, 3)
      // Another account's count holds none of them.
      const stranger = await server.user()
      assert.equal((await server.api('GET', '/v1/websites', { token: stranger.token })).body.websiteLimits.formSubmissions, 0)
      assert.equal((await server.api('DELETE', `/v1/websites/${first.websiteId}/forms/booking/submissions/${ids[0]}`, { token: owner.token })).status, 204)
      assert.equal((await server.api('GET', `/v1/websites/${first.websiteId}`, { token: owner.token })).body.usage.formSubmissions, 1)
      assert.equal((await server.api('GET', '/v1/websites', { token: owner.token })).body.websiteLimits.formSubmissions, 2)
    })
  })
}
