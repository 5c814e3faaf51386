/**
 * Forms found at publish: `<form method="post" action="/_forms/{name}">` declares a form with its
 * named fields; the publish result lists the forms and the version records them.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { formsOfPage } from '../../src/publishing/form-declarations.ts'
import { bundle, sharedTestServers } from '../helpers/server.ts'
import { createSite, createVersion } from '../helpers/factories.ts'
import { STORES } from '../helpers/stores.ts'

const BOOKING_PAGE = `<!doctype html><html><head><title>Book</title></head><body>
<FORM Method="POST" action="/_forms/booking" id="b">
  <input type="hidden" name="_next" value="/thanks.html">
  <input name="_gotcha" style="display:none">
  <label>Name <input name="name" required></label>
  <label>E-mail <input type="email" name="email"></label>
  <select name="party"><option>2</option></select>
  <textarea name="notes"></textarea>
  <input type="file" name="menu">
  <button type="submit" name="go">Book</button>
  <input type="submit" value="Send">
</FORM>
<input name="phone" type="tel" form="b">
<form method="get" action="/_forms/search"><input name="q"></form>
<form method="post" action="/_forms/Bad_Name"><input name="x"></form>
<form method="post" action="https://elsewhere.example/_forms/x"><input name="y"></form>
</body></html>`

describe('form declarations in a page', () => {
  test('a post form to /_forms/{name} is a form, with its named fields and no controls or buttons', () => {
    assert.deepEqual(formsOfPage(BOOKING_PAGE), [
      {
        name: 'booking',
        fields: [
          { name: 'name', type: 'text', required: true },
          { name: 'email', type: 'email', required: false },
          { name: 'party', type: 'select', required: false },
          { name: 'notes', type: 'textarea', required: false },
          { name: 'menu', type: 'file', required: false },
          { name: 'phone', type: 'tel', required: false },
        ],
      },
    ])
  })

  test('a page without the forms path is not parsed and declares none', () => {
    assert.deepEqual(formsOfPage('<form method="post" action="/contact"><input name="a"></form>'), [])
  })

  test('a name declared twice has its fields merged', () => {
    const page =
      '<form method="post" action="/_forms/contact"><input name="a"></form><form method="post" action="/_forms/contact"><input name="b"><input name="a"></form>'
    assert.deepEqual(formsOfPage(page), [
      {
        name: 'contact',
        fields: [
          { name: 'a', type: 'text', required: false },
          { name: 'b', type: 'text', required: false },
        ],
      },
    ])
  })
})

const sharedServer = sharedTestServers()

for (const store of STORES) {
  describe(`forms found at publish (${store.name})`, { skip: store.skip }, () => {
    test('the publish result lists the forms of every page; a version without them lists none', async () => {
      const server = await sharedServer(store.name)
      const owner = await server.user()
      const files = bundle('Bistro', [
        { path: 'book.html', content: BOOKING_PAGE },
        { path: 'contact/index.html', content: '<!doctype html><title>C</title><form method="post" action="/_forms/contact"><input name="message"></form>' },
      ])
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files } })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual(
        created.body.forms.map((f: { name: string }) => f.name),
        ['booking', 'contact'],
      )
      assert.equal(created.body.forms[0].fields.length, 6)
      const rows = await server.server.db.kysely.selectFrom('version_forms').selectAll().where('version_id', '=', created.body.jobId).orderBy('name').execute()
      assert.deepEqual(
        rows.map((r) => r.name),
        ['booking', 'contact'],
      )
      const plain = await server.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token, body: { files: bundle('Plain') } })
      assert.equal(plain.status, 201, plain.text)
      assert.equal(plain.body.forms, undefined)
    })

    test('a site without forms publishes as before', async () => {
      const server = await sharedServer(store.name)
      const site = await createSite(server)
      const next = await createVersion(server, site.owner, site.websiteId)
      assert.ok(next.version === 2)
    })
  })
}
