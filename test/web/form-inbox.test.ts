/**
 * The form inbox on the dashboard: per form, newest first, paged, searchable; marking as spam,
 * deleting and the CSV export; hostile values shown as text, never as markup.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { sharedTestServers } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { WebVisitor } from '../helpers/web.ts'

const sharedServer = sharedTestServers()
const HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'

for (const store of STORES) {
  describe(`form inbox (${store.name})`, { skip: store.skip }, () => {
    test('lists submissions escaped, pages, searches, marks spam, deletes and exports', async () => {
      const server = await sharedServer(store.name, { PLINTH_FORM_RATE_PER_SITE: '1000000', PLINTH_FORM_RATE_PER_ADDRESS: '1000000' })
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      const { websiteId, slug } = created.body
      const ids: string[] = []
      for (let i = 0; i < 21; i++) {
        const data: Record<string, string> =
          i === 20 ? { name: HOSTILE, [`"><svg onload=alert(2)>`]: 'field name too', notes: '=cmd|calc' } : { name: `Guest ${i}`, party: '2' }
        const res = await postForm(server, slug, '/_forms/booking', urlencoded(data), { accept: 'application/json' })
        assert.equal(res.status, 201, res.text)
        ids.push(res.json.submissionId)
      }
      const visitor = new WebVisitor(server)
      assert.equal((await visitor.signIn(owner.email)).status, 303)
      const site = await visitor.get(`/dashboard/sites/${websiteId}`)
      assert.ok(site.text.includes(`/dashboard/sites/${websiteId}/forms`))
      const list = await visitor.get(`/dashboard/sites/${websiteId}/forms`)
      assert.equal(list.status, 200)
      assert.match(list.text, /booking<\/a> · 21 submissions/)
      const inbox = await visitor.get(`/dashboard/sites/${websiteId}/forms/booking`)
      assert.equal(inbox.status, 200, inbox.text)
      assert.ok(!inbox.text.includes('<script>alert') && !inbox.text.includes('<img src=x') && !inbox.text.includes('<svg onload'), 'no visitor markup')
      assert.match(inbox.text, /&lt;script&gt;alert\((&quot;|&#34;)pwned(&quot;|&#34;)\)&lt;\/script&gt;&lt;img src=x onerror=alert\(1\)&gt;/)
      assert.match(inbox.text, /(&quot;|&#34;)&gt;&lt;svg onload=alert\(2\)&gt;/)
      // Newest first, 20 a page: the hostile one first, Guest 0 on the next page.
      assert.ok(inbox.text.indexOf('&lt;script&gt;') < inbox.text.indexOf('Guest 19'))
      assert.ok(!inbox.text.includes('Guest 0<'))
      const older = /href="([^"]+cursor=[^"]+)"/.exec(inbox.text)?.[1]
      assert.ok(older, 'a link to older submissions')
      const page2 = await visitor.get(older.replace(/&amp;/g, '&'))
      assert.ok(page2.text.includes('Guest 0<'))
      const search = await visitor.get(`/dashboard/sites/${websiteId}/forms/booking?q=guest%2017`)
      assert.ok(search.text.includes('Guest 17') && !search.text.includes('Guest 16'))
      const spam = await visitor.post(`/dashboard/sites/${websiteId}/forms/booking/submissions/${ids[20]}/spam`, { spam: 'true' })
      assert.equal(spam.status, 303)
      const after = await visitor.get(`/dashboard/sites/${websiteId}/forms/booking?done=spam`)
      assert.match(after.text, /class="spam"/)
      assert.equal((await visitor.post(`/dashboard/sites/${websiteId}/forms/booking/submissions/${ids[0]}/delete`, {})).status, 303)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}/forms/booking/submissions/${ids[0]}`, { token: owner.token })).status, 404)
      // Without the CSRF token nothing changes.
      assert.equal((await visitor.post(`/dashboard/sites/${websiteId}/forms/booking/submissions/${ids[1]}/delete`, { _csrf: null })).status, 403)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}/forms/booking/submissions/${ids[1]}`, { token: owner.token })).status, 200)
      const csv = await visitor.get(`/dashboard/sites/${websiteId}/forms/booking/submissions.csv`)
      assert.equal(csv.status, 200)
      assert.match(csv.headers.get('content-type')!, /^text\/csv/)
      assert.ok(csv.text.includes(`'=cmd|calc`))
      assert.equal(csv.text.trim().split('\r\n').length, 21)
      const stranger = new WebVisitor(server)
      await stranger.signIn((await server.user()).email)
      assert.equal((await stranger.get(`/dashboard/sites/${websiteId}/forms/booking`)).status, 404)
    })
  })
}
