/**
 * The form inbox on the dashboard: per form, newest first, paged, searchable; marking as spam,
 * deleting and the CSV export; hostile values shown as text, never as markup. The forms page's
 * settings (who is e-mailed, each or daily, how long submissions are kept) are the owner's to
 * change and the editors' to read, and the owner erases what a visitor sent from one address.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { addEditor, createUser } from '../helpers/factories.ts'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { sharedTestServers } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { WebVisitor } from '../helpers/web.ts'

const sharedServer = sharedTestServers()
const UNTHROTTLED = { PLINTH_FORM_RATE_PER_SITE: '1000000', PLINTH_FORM_RATE_PER_ADDRESS: '1000000' }
const HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'

for (const store of STORES) {
  describe(`form inbox (${store.name})`, { skip: store.skip }, () => {
    test('lists submissions escaped, pages, searches, marks spam, deletes and exports', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
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
    test('the owner sets who is e-mailed, how often and for how long; editors read them; bad input changes nothing', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      const { websiteId } = created.body
      const settingsUrl = `/v1/websites/${websiteId}/form-settings`
      const formsPage = `/dashboard/sites/${websiteId}/forms`
      const visitor = new WebVisitor(server)
      assert.equal((await visitor.signIn(owner.email)).status, 303)
      const page = await visitor.get(formsPage)
      assert.equal(page.status, 200)
      assert.match(page.text, /<label for="notify">/)
      assert.ok(page.text.includes(`submissions are e-mailed to you, the owner (${owner.email})`))
      assert.match(page.text, /no mail server set up/, 'without PLINTH_SMTP_URL the page says no e-mail is sent')

      const saved = await visitor.post(`${formsPage}/settings`, {
        notify: 'Bookings@Example.com,\nchef@example.com',
        notifyMode: 'daily',
        retention: 'days',
        retentionDays: '30',
      })
      assert.equal(saved.status, 303, saved.text)
      assert.equal(saved.headers.get('location'), `${formsPage}?done=settings`)
      const expected = { notify: ['bookings@example.com', 'chef@example.com'], retentionDays: 30, notifyMode: 'daily' }
      assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, expected)
      const shown = await visitor.get(`${formsPage}?done=settings`)
      assert.match(shown.text, /The form settings are saved/)
      assert.match(shown.text, /bookings@example.com\nchef@example.com<\/textarea>/)
      assert.match(shown.text, /value="daily" checked/)
      assert.match(shown.text, /value="30"/)

      // Bad input is said next to its field, what was typed stays, and nothing changes.
      const badAddress = await visitor.post(`${formsPage}/settings`, { notify: 'chef@example.com, not-an-address', notifyMode: 'each', retention: 'forever' })
      assert.equal(badAddress.status, 422)
      assert.match(badAddress.text, /id="notify-error">The list of addresses holds (&quot;|&#34;)not-an-address(&quot;|&#34;), which is not an e-mail address/)
      assert.match(badAddress.text, /chef@example.com, not-an-address<\/textarea>/)
      for (const retentionDays of ['0', '3651', '2.5', '']) {
        const badDays = await visitor.post(`${formsPage}/settings`, { notify: '', notifyMode: 'each', retention: 'days', retentionDays })
        assert.equal(badDays.status, 422, retentionDays)
        assert.match(badDays.text, /id="retention-error">The number of days must be a whole number of days from 1 to 3650/)
      }
      const tooMany = await visitor.post(`${formsPage}/settings`, {
        notify: 'a@example.com b@example.com c@example.com d@example.com e@example.com f@example.com',
        notifyMode: 'each',
        retention: 'forever',
      })
      assert.equal(tooMany.status, 422)
      assert.match(tooMany.text, /at most 5/)
      assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, expected)

      // Without the CSRF token nothing changes.
      const forged = await visitor.post(`${formsPage}/settings`, { _csrf: null, notify: '', notifyMode: 'each', retention: 'forever' })
      assert.equal(forged.status, 403)
      assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, expected)

      // An editor reads the settings and is refused changing them.
      const editor = await addEditor(server, websiteId)
      const editorVisitor = new WebVisitor(server)
      assert.equal((await editorVisitor.signIn(editor.email)).status, 303)
      const readOnly = await editorVisitor.get(formsPage)
      assert.equal(readOnly.status, 200)
      assert.match(readOnly.text, /Only the site(&#39;|')s owner changes these settings/)
      assert.ok(
        readOnly.text.includes('bookings@example.com, chef@example.com') && readOnly.text.includes('one digest a day') && readOnly.text.includes('30 days'),
      )
      assert.ok(!readOnly.text.includes(`action="${formsPage}/settings"`), 'no settings form for an editor')
      assert.ok(readOnly.text.includes(`action="${formsPage}/erasures"`), 'an editor erases a visitor, as they delete submissions')
      const refused = await editorVisitor.post(`${formsPage}/settings`, { notify: '', notifyMode: 'each', retention: 'forever' })
      assert.equal(refused.status, 403)
      assert.match(refused.text, /Only the site(&#39;|')s owner can change its form settings/)
      assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, expected)

      // Emptied, the addresses fall back to the owner's; "until they are deleted" keeps submissions.
      assert.equal((await visitor.post(`${formsPage}/settings`, { notify: ' ', notifyMode: 'each', retention: 'forever', retentionDays: '30' })).status, 303)
      assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, { notify: null, retentionDays: null, notifyMode: 'each' })
      const defaults = (await editorVisitor.get(formsPage)).text
      assert.ok(defaults.includes('the owner&#39;s address') || defaults.includes("the owner's address"), 'null: the owner')
      assert.ok(defaults.includes('until they are deleted') && defaults.includes('each submission'))
      // Nobody e-mailed, which only the API sets, is said to the owner.
      assert.equal((await server.api('PUT', settingsUrl, { token: owner.token, body: { notify: [], retentionDays: null } })).status, 200)
      assert.match((await visitor.get(formsPage)).text, /Nobody is e-mailed now/)
      assert.match((await editorVisitor.get(formsPage)).text, /<dd>nobody<\/dd>/)
    })

    test('the owner erases exactly the submissions a visitor sent from one address', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      const { websiteId, slug } = created.body
      const sent: Array<Record<string, string>> = [
        { name: 'Ada', email: 'Ada@Example.com' },
        { name: 'Bob', email: 'bob@example.com' },
        { name: 'Ada again', email: 'ada@example.com' },
        { name: 'Nobody' },
      ]
      for (const data of sent) assert.equal((await postForm(server, slug, '/_forms/booking', urlencoded(data), { accept: 'application/json' })).status, 201)
      const names = async () => {
        const listed = await server.api('GET', `/v1/websites/${websiteId}/forms/booking/submissions`, { token: owner.token })
        return (listed.body.items as Array<{ data: { name: string } }>).map((s) => s.data.name).sort()
      }
      const formsPage = `/dashboard/sites/${websiteId}/forms`
      const visitor = new WebVisitor(server)
      assert.equal((await visitor.signIn(owner.email)).status, 303)
      assert.match((await visitor.get(formsPage)).text, /<label for="erase-email">/)

      const bad = await visitor.post(`${formsPage}/erasures`, { email: 'not an address' })
      assert.equal(bad.status, 422)
      assert.match(bad.text, /role="alert"[^]*The address must be an e-mail address/)
      assert.equal((await visitor.post(`${formsPage}/erasures`, { _csrf: null, email: 'ada@example.com' })).status, 403)
      const editor = await addEditor(server, websiteId)
      const editorVisitor = new WebVisitor(server)
      assert.equal((await editorVisitor.signIn(editor.email)).status, 303)
      await editorVisitor.get(formsPage)
      const byEditor = await editorVisitor.post(`${formsPage}/erasures`, { email: 'someone-else@example.com' })
      assert.equal(byEditor.headers.get('location'), `${formsPage}?erased=0`, 'an editor may erase, as over the API')
      const stranger = new WebVisitor(server)
      assert.equal((await stranger.signIn((await createUser(server)).email)).status, 303)
      await stranger.get('/dashboard')
      assert.equal((await stranger.post(`${formsPage}/erasures`, { email: 'ada@example.com' })).status, 404)
      assert.deepEqual(await names(), ['Ada', 'Ada again', 'Bob', 'Nobody'])

      const erased = await visitor.post(`${formsPage}/erasures`, { email: 'ADA@example.com' })
      assert.equal(erased.status, 303)
      assert.equal(erased.headers.get('location'), `${formsPage}?erased=2`)
      assert.match((await visitor.get(`${formsPage}?erased=2`)).text, /Deleted 2 submissions sent from that address/)
      assert.deepEqual(await names(), ['Bob', 'Nobody'])
      const again = await visitor.post(`${formsPage}/erasures`, { email: 'ada@example.com' })
      assert.equal(again.headers.get('location'), `${formsPage}?erased=0`)
      assert.match((await visitor.get(`${formsPage}?erased=0`)).text, /nothing was deleted/)
    })
  })
}
