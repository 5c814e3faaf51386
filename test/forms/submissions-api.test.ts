/**
 * Owners and editors read a site's submissions over REST and MCP: forms with counts, pages newest
 * first with search, spam, deletion, the CSV export (formula injection neutralised), settings,
 * erasure by address and retention. Anyone else gets 404, and bad input changes nothing.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { csvField } from '../../src/forms/forms.csv.ts'
import { addEditor, assertError } from '../helpers/factories.ts'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { call, CLIENTS, connect } from '../helpers/mcp.ts'
import { sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const sharedServer = sharedTestServers()
const UNTHROTTLED = { PLINTH_FORM_RATE_PER_SITE: '1000000', PLINTH_FORM_RATE_PER_ADDRESS: '1000000' }

async function siteWithSubmissions(server: TestServer, values: Array<Record<string, string>>) {
  const owner = await server.user()
  const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
  assert.equal(created.status, 201, created.text)
  const ids: string[] = []
  for (const data of values) {
    const res = await postForm(server, created.body.slug, '/_forms/booking', urlencoded(data), { accept: 'application/json' })
    assert.equal(res.status, 201, res.text)
    ids.push(res.json.submissionId)
  }
  return { owner, websiteId: created.body.websiteId as string, slug: created.body.slug as string, ids }
}

test('a CSV field is quoted when it must be and never starts a formula', () => {
  assert.equal(csvField('plain'), 'plain')
  assert.equal(csvField('a,b'), '"a,b"')
  assert.equal(csvField('say "hi"\nbye'), '"say ""hi""\nbye"')
  for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) assert.equal(csvField(formula).replace(/^"/, '')[0], "'", formula)
  assert.equal(csvField('=HYPERLINK("http://evil.example","x")'), `"'=HYPERLINK(""http://evil.example"",""x"")"`)
})

for (const store of STORES) {
  describe(`reading submissions (${store.name})`, { skip: store.skip }, () => {
    test('forms are listed with counts; submissions come newest first in pages, searchable; strangers get 404', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const site = await siteWithSubmissions(server, [{ name: 'Ada', notes: 'window seat' }, { name: 'Grace' }, { name: 'Linus', notes: 'Window please' }])
      const forms = await server.api('GET', `/v1/websites/${site.websiteId}/forms`, { token: site.owner.token })
      assert.equal(forms.status, 200, forms.text)
      const [booking] = forms.body.items
      assert.equal(booking.name, 'booking')
      assert.equal(booking.live, true)
      assert.equal(booking.submissions, 3)
      assert.match(booking.lastSubmissionAt, /^\d{4}-/)
      assert.deepEqual(
        booking.fields.map((f: any) => f.name),
        ['name', 'email', 'date', 'party', 'notes', 'menu'],
      )
      const base = `/v1/websites/${site.websiteId}/forms/booking/submissions`
      const first = await server.api('GET', `${base}?limit=2`, { token: site.owner.token })
      assert.deepEqual(
        first.body.items.map((s: any) => s.data.name),
        ['Linus', 'Grace'],
      )
      const second = await server.api('GET', `${base}?limit=2&cursor=${first.body.nextCursor}`, { token: site.owner.token })
      assert.deepEqual(
        second.body.items.map((s: any) => s.data.name),
        ['Ada'],
      )
      assert.equal(second.body.nextCursor, null)
      const found = await server.api('GET', `${base}?q=WINDOW`, { token: site.owner.token })
      assert.deepEqual(
        found.body.items.map((s: any) => s.data.name),
        ['Linus', 'Ada'],
      )
      assert.equal((await server.api('GET', `${base}?q=${encodeURIComponent('100%_')}`, { token: site.owner.token })).body.items.length, 0)
      assertError(await server.api('GET', `${base}?cursor=nonsense`, { token: site.owner.token }), 422, 'VALIDATION_FAILED')
      assertError(await server.api('GET', `${base}?limit=0`, { token: site.owner.token }), 422, 'VALIDATION_FAILED')
      assertError(await server.api('GET', `/v1/websites/${site.websiteId}/forms/Bad_Name/submissions`, { token: site.owner.token }), 422, 'VALIDATION_FAILED')
      const editor = await addEditor(server, site.websiteId)
      assert.equal((await server.api('GET', base, { token: editor.token })).body.items.length, 3)
      const stranger = await server.user()
      assertError(await server.api('GET', base, { token: stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `/v1/websites/${site.websiteId}/forms`, { token: stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('DELETE', `${base}/${site.ids[0]}`, { token: stranger.token }), 404, 'NOT_FOUND')
      assert.equal((await server.api('GET', base, { token: site.owner.token })).body.items.length, 3)
    })

    test('marking as spam, deleting one and deleting all', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const site = await siteWithSubmissions(server, [{ name: 'One' }, { name: 'Two' }, { name: 'Three' }])
      const base = `/v1/websites/${site.websiteId}/forms/booking/submissions`
      const marked = await server.api('PATCH', `${base}/${site.ids[0]}`, { token: site.owner.token, body: { spam: true } })
      assert.equal(marked.status, 200, marked.text)
      assert.equal(marked.body.spam, true)
      assertError(await server.api('PATCH', `${base}/${site.ids[0]}`, { token: site.owner.token, body: { spam: 'yes' } }), 422, 'VALIDATION_FAILED')
      assert.equal((await server.api('DELETE', `${base}/${site.ids[1]}`, { token: site.owner.token })).status, 204)
      assertError(await server.api('DELETE', `${base}/${site.ids[1]}`, { token: site.owner.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `${base}/${site.ids[1]}`, { token: site.owner.token }), 404, 'NOT_FOUND')
      const all = await server.api('DELETE', base, { token: site.owner.token })
      assert.deepEqual(all.body, { deleted: 2 })
      assert.equal((await server.api('GET', base, { token: site.owner.token })).body.items.length, 0)
    })

    test('the CSV export has a column per field and neutralises formulas', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const site = await siteWithSubmissions(server, [
        { name: '=HYPERLINK("http://evil.example","click")', notes: 'line one\nline "two"' },
        { name: '@SUM(A1:A9)', party: '+4' },
      ])
      const res = await fetch(`${server.url}/v1/websites/${site.websiteId}/forms/booking/submissions.csv`, {
        headers: { authorization: `Bearer ${site.owner.token}` },
      })
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type')!, /^text\/csv/)
      assert.match(res.headers.get('content-disposition')!, new RegExp(`attachment; filename="${site.slug}-booking.csv"`))
      const csv = await res.text()
      const [header] = csv.split('\r\n')
      assert.equal(header, 'id,createdAt,spam,name,email,date,party,notes,menu,files')
      assert.ok(csv.includes(`"'=HYPERLINK(""http://evil.example"",""click"")"`), csv)
      assert.ok(csv.includes(`'@SUM(A1:A9)`), csv)
      assert.ok(csv.includes(`,'+4,`), csv)
      assert.ok(csv.includes('"line one\nline ""two"""'), csv)
      assert.ok(
        !/(^|,)[=+@-]/m.test(
          csv
            .split('\r\n')
            .slice(1)
            .join('\r\n')
            .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, ''),
        ),
        csv,
      )
    })

    test('settings are the owner’s; erasure by address and retention delete what they name', async () => {
      const server = await sharedServer(store.name, UNTHROTTLED)
      const site = await siteWithSubmissions(server, [
        { name: 'A', email: 'Visitor@Example.com' },
        { name: 'B', email: 'other@example.com' },
        { name: 'C', email: 'visitor@example.com' },
      ])
      const settings = `/v1/websites/${site.websiteId}/form-settings`
      assert.deepEqual((await server.api('GET', settings, { token: site.owner.token })).body, { notify: null, retentionDays: null, notifyMode: 'each' })
      const editor = await addEditor(server, site.websiteId)
      assertError(await server.api('PUT', settings, { token: editor.token, body: { notify: [], retentionDays: null } }), 403, 'OWNER_ONLY')
      assertError(
        await server.api('PUT', settings, { token: site.owner.token, body: { notify: ['not an address'], retentionDays: null } }),
        422,
        'VALIDATION_FAILED',
      )
      assertError(await server.api('PUT', settings, { token: site.owner.token, body: { notify: null, retentionDays: 0 } }), 422, 'VALIDATION_FAILED')
      const set = await server.api('PUT', settings, { token: site.owner.token, body: { notify: ['Bookings@Example.com'], retentionDays: 30 } })
      assert.deepEqual(set.body, { notify: ['bookings@example.com'], retentionDays: 30, notifyMode: 'each' })
      const erased = await server.api('POST', `/v1/websites/${site.websiteId}/form-erasures`, {
        token: site.owner.token,
        body: { email: 'VISITOR@example.com' },
      })
      assert.deepEqual(erased.body, { deleted: 2 })
      assertError(
        await server.api('POST', `/v1/websites/${site.websiteId}/form-erasures`, { token: site.owner.token, body: { email: 'nope' } }),
        422,
        'VALIDATION_FAILED',
      )
      // Retention: a submission older than the site's retention goes at the next sweep.
      const db = server.server.db.kysely
      await db.updateTable('form_submissions').set({ created_at: '2000-01-01T00:00:00.000Z' }).where('website_id', '=', site.websiteId).execute()
      assert.equal(await server.server.services.forms.sweepRetention(), 1)
      assert.equal((await server.api('GET', `/v1/websites/${site.websiteId}/forms/booking/submissions`, { token: site.owner.token })).body.items.length, 0)
    })

    for (const kind of CLIENTS) {
      test(`MCP lists forms and submissions in the forms toolset (${kind} client)`, async () => {
        const server = await sharedServer(store.name, UNTHROTTLED)
        const site = await siteWithSubmissions(server, [{ name: 'Ada', party: '2' }])
        const client = await connect(server, site.owner.token, { client: kind, toolsets: 'forms' })
        try {
          const forms = await call(client, 'list_forms', { websiteId: site.websiteId })
          assert.equal(forms.isError, false)
          assert.equal(forms.data.items[0].submissions, 1)
          const page = await call(client, 'list_form_submissions', { websiteId: site.websiteId, name: 'booking', limit: 10 })
          assert.deepEqual(page.data.items[0].data, { name: 'Ada', party: '2' })
          const bad = await call(client, 'list_form_submissions', { websiteId: site.websiteId, name: 'booking', cursor: 'x' })
          assert.equal(bad.isError, true)
          assert.equal(bad.data.error.code, 'VALIDATION_FAILED')
        } finally {
          await client.close()
        }
      })
    }
  })
}
