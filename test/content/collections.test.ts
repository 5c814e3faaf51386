import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FIELDS, siteWithCollection } from '../helpers/content.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

for (const store of STORES) {
  describe(`collections (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('a collection is created, listed and read back with its fields and reserved paths', async () => {
      const { user, websiteId, base } = await siteWithCollection(server)
      const got = await server.api('GET', base, { token: user.token })
      assert.equal(got.status, 200)
      assert.match(got.body.id, /^col_/)
      assert.equal(got.body.name, 'posts')
      assert.deepEqual(
        got.body.fields.map((f: { name: string }) => f.name),
        FIELDS.map((f) => f.name),
      )
      assert.equal(got.body.entryPath, '/posts-{slug}')
      assert.deepEqual(got.body.reservedPaths, ['posts-*', 'posts', 'posts.html', 'posts.json', 'posts.xml', 'posts/'])
      assert.equal(got.body.entryCount, 0)
      const list = await server.api('GET', `/v1/websites/${websiteId}/collections`, { token: user.token })
      assert.equal(list.status, 200)
      assert.deepEqual(
        list.body.items.map((c: { name: string }) => c.name),
        ['posts'],
      )
    })

    test('names are URL-safe, hyphen-free, unique per site and not reserved for Plinth', async () => {
      const { user, websiteId } = await siteWithCollection(server)
      const create = (name: unknown) =>
        server.api('POST', `/v1/websites/${websiteId}/collections`, { token: user.token, body: { name, label: 'X', fields: [] } })
      for (const name of ['my-posts', 'Posts', '_posts', 'p', '9lives', 'a'.repeat(41), 'po sts', 'posts/x']) {
        const res = await create(name)
        assert.equal(res.status, 422, name)
        assert.equal(res.body.error.code, 'VALIDATION_FAILED')
        assert.ok(res.body.error.fields.name, name)
      }
      const reserved = await create('assets')
      assert.equal(reserved.status, 422)
      assert.match(reserved.body.error.fields.name, /reserved/)
      const duplicate = await create('posts')
      assert.equal(duplicate.status, 409)
      assert.equal(duplicate.body.error.code, 'COLLECTION_EXISTS')
      const list = await server.api('GET', `/v1/websites/${websiteId}/collections`, { token: user.token })
      assert.equal(list.body.items.length, 1, 'nothing was created by the refused requests')
    })

    test('field definitions are checked, every problem named at once', async () => {
      const { user, websiteId } = await siteWithCollection(server)
      const res = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: user.token,
        body: {
          name: 'events',
          label: 'Events',
          fields: [
            { name: 'kind', label: 'Kind', type: 'choice' },
            { name: 'title', label: 'Title', type: 'text', options: ['a'] },
            { name: 'Title', label: 'Again', type: 'text' },
            { name: 'n', label: 'N', type: 'number', min: 5, max: 1 },
            { name: 'when', label: 'When', type: 'date', maxLength: 3 },
          ],
        },
      })
      assert.equal(res.status, 422)
      assert.deepEqual(Object.keys(res.body.error.fields).sort(), [
        'fields[0].options',
        'fields[1].options',
        'fields[2].name',
        'fields[3].max',
        'fields[4].maxLength',
      ])
      const badType = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: user.token,
        body: { name: 'events', label: 'E', fields: [{ name: 'x', label: 'X', type: 'html' }], extra: 1 },
      })
      assert.equal(badType.status, 422)
      assert.ok(badType.body.error.fields['fields[0].type'])
      assert.ok(badType.body.error.fields.extra)
      const tooMany = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: user.token,
        body: { name: 'events', label: 'E', fields: Array.from({ length: 51 }, (_, i) => ({ name: `f${i}`, label: 'F', type: 'text' })) },
      })
      assert.equal(tooMany.status, 422)
    })

    test("a name whose paths clash with the live version's files is refused, naming the files", async () => {
      const files = bundle('Clash', [
        { path: 'news-2024.html', content: '<!doctype html><title>n</title>' },
        { path: 'blog/index.html', content: '<!doctype html><title>b</title>' },
        { path: 'newsletter.html', content: '<!doctype html><title>l</title>' },
      ])
      const { user, websiteId } = await siteWithCollection(server, 'posts', files)
      const create = (name: string) =>
        server.api('POST', `/v1/websites/${websiteId}/collections`, { token: user.token, body: { name, label: 'X', fields: [] } })
      const news = await create('news')
      assert.equal(news.status, 409)
      assert.equal(news.body.error.code, 'COLLECTION_CONFLICT')
      assert.match(news.body.error.message, /news-2024\.html/)
      assert.doesNotMatch(news.body.error.message, /newsletter/)
      const blog = await create('blog')
      assert.equal(blog.status, 409)
      assert.match(blog.body.error.message, /blog\/index\.html/)
      assert.equal((await create('newsletters')).status, 201, 'newsletter.html is not under newsletters-*')
    })

    test('a publish may not add files where a collection serves its entries (RESERVED_PATH)', async () => {
      const { user, websiteId } = await siteWithCollection(server)
      const publish = (extra: Array<{ path: string; content: string }>) =>
        server.api('POST', `/v1/websites/${websiteId}/versions`, { token: user.token, body: { files: bundle('V2', extra) } })
      const bad = await publish([
        { path: 'posts-hello.html', content: '<!doctype html><title>x</title>' },
        { path: 'posts.xml', content: '<rss/>' },
        { path: 'posts/index.html', content: '<!doctype html><title>x</title>' },
      ])
      assert.equal(bad.status, 422)
      assert.equal(bad.body.error.code, 'PUBLISH_INVALID')
      const reserved = bad.body.error.violations.filter((v: { code: string }) => v.code === 'RESERVED_PATH')
      assert.deepEqual(
        reserved.map((v: { path: string }) => v.path),
        ['posts-hello.html', 'posts.xml', 'posts/index.html'],
      )
      assert.match(reserved[0].message, /collection "posts"/)
      const fine = await publish([
        { path: 'postscript.html', content: '<!doctype html><title>x</title>' },
        { path: 'about/posts-1.html', content: '<!doctype html><title>x</title>' },
      ])
      assert.equal(fine.status, 201, fine.text)
    })

    test('updating fields never loses stored values; a type change is refused while values exist', async () => {
      const { user, base } = await siteWithCollection(server)
      const token = user.token
      const put = await server.api('PUT', `${base}/entries/first`, { token, body: { data: { title: 'First', price: 12, kind: 'news' } } })
      assert.equal(put.status, 201, put.text)

      const withoutPrice = FIELDS.filter((f) => f.name !== 'price')
      const removed = await server.api('PATCH', base, { token, body: { label: 'Articles', fields: withoutPrice } })
      assert.equal(removed.status, 200, removed.text)
      assert.equal(removed.body.label, 'Articles')
      assert.deepEqual(
        removed.body.removedFields.map((f: { name: string }) => f.name),
        ['price'],
      )
      const entry = await server.api('GET', `${base}/entries/first`, { token })
      assert.equal(entry.body.data.price, 12, 'the value of the removed field is kept')
      assert.equal(entry.body.rendered.price, undefined)

      // Writing the entry again keeps the value too; sending the removed field is refused.
      const again = await server.api('PUT', `${base}/entries/first`, { token, body: { data: { title: 'First again' } } })
      assert.equal(again.status, 200)
      assert.equal(again.body.data.price, 12)
      const stale = await server.api('PUT', `${base}/entries/first`, { token, body: { data: { title: 'x', price: 3 } } })
      assert.equal(stale.status, 422)
      assert.equal(stale.body.error.fields['data.price'], 'is not a field of this collection')

      const retyped = await server.api('PATCH', base, { token, body: { fields: [...withoutPrice, { name: 'price', label: 'Price', type: 'text' }] } })
      assert.equal(retyped.status, 409)
      assert.equal(retyped.body.error.code, 'FIELD_IN_USE')
      const titleAsNumber = await server.api('PATCH', base, {
        token,
        body: { fields: withoutPrice.map((f) => (f.name === 'title' ? { name: 'title', label: 'T', type: 'number' } : f)) },
      })
      assert.equal(titleAsNumber.status, 409)
      assert.match(titleAsNumber.body.error.fields['fields[0].type'], /cannot change/)

      const restored = await server.api('PATCH', base, { token, body: { fields: FIELDS } })
      assert.equal(restored.status, 200, restored.text)
      assert.deepEqual(restored.body.removedFields, [])
      const back = await server.api('GET', `${base}/entries/first`, { token })
      assert.equal(back.body.data.price, 12)

      const unusedRetype = await server.api('PATCH', base, { token, body: { fields: FIELDS.map((f) => (f.name === 'link' ? { ...f, type: 'text' } : f)) } })
      assert.equal(unusedRetype.status, 200, 'a field no entry holds a value for may change type')
      const empty = await server.api('PATCH', base, { token, body: {} })
      assert.equal(empty.status, 422)
    })

    test("another user's site is 404 for every collection operation; an editor may work on it", async () => {
      const { user, websiteId, base } = await siteWithCollection(server)
      const stranger = await server.user()
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/v1/websites/${websiteId}/collections`],
        ['POST', `/v1/websites/${websiteId}/collections`, { name: 'mine', label: 'M', fields: [] }],
        ['GET', base],
        ['PATCH', base, { label: 'Hijacked' }],
        ['GET', `${base}/entries`],
        ['PUT', `${base}/entries/x`, { data: { title: 'x' } }],
        ['POST', `${base}/entries/batch`, { entries: [{ slug: 'x', data: { title: 'x' } }] }],
        ['DELETE', `${base}/entries/x`],
      ]
      for (const [method, path, body] of calls) {
        const res = await server.api(method, path, { token: stranger.token, body })
        assert.equal(res.status, 404, `${method} ${path}`)
        assert.equal(res.body.error.code, 'NOT_FOUND')
      }
      assert.equal((await server.api('GET', base, { token: user.token })).body.label, 'Posts')
      assert.equal((await server.api('GET', `${base}/entries`, { token: user.token })).body.items.length, 0)

      await server.server.services.members.share(websiteId, stranger.email, 'editor')
      const created = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: stranger.token,
        body: { name: 'mine', label: 'M', fields: [] },
      })
      assert.equal(created.status, 201)
      assert.equal((await server.api('GET', `${base}/nope`, { token: user.token })).status, 404)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}/collections/nope`, { token: user.token })).body.error.code, 'NOT_FOUND')
    })
  })
}
