import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { siteWithCollection } from '../helpers/content.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** An image URL no library may fetch (loopback, port 1): its entry must fail alone. */
const UNREACHABLE_IMAGE = 'http://127.0.0.1:1/cover.png'

for (const store of STORES) {
  describe(`entries (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('putEntry creates, replaces and is idempotent; getEntry and deleteEntry take id or slug', async () => {
      const { user, base } = await siteWithCollection(server)
      const token = user.token
      const body = {
        publishedAt: '2024-05-01T09:00:00+02:00',
        data: { title: 'Hello', body: { markdown: 'Some *news*' }, kind: 'news', price: 9.5, featured: true, day: '2024-05-01', link: 'https://example.com/a' },
      }
      const created = await server.api('PUT', `${base}/entries/hello-world`, { token, body })
      assert.equal(created.status, 201, created.text)
      assert.equal(created.headers.get('entry-status'), 'created')
      const entry = created.body
      assert.match(entry.id, /^ent_/)
      assert.equal(entry.slug, 'hello-world')
      assert.equal(entry.path, '/posts-hello-world')
      assert.equal(entry.publishedAt, '2024-05-01T07:00:00.000Z', 'timestamps are normalized to UTC')
      assert.equal(entry.live, true)
      assert.deepEqual(entry.data.body, { markdown: 'Some *news*' }, 'data is kept as sent')
      assert.match(entry.rendered.body, /<em>news<\/em>/, 'rich text is rendered')

      const same = await server.api('PUT', `${base}/entries/hello-world`, { token, body })
      assert.equal(same.status, 200)
      assert.equal(same.headers.get('entry-status'), 'unchanged')
      assert.equal(same.body.updatedAt, entry.updatedAt)

      const changed = await server.api('PUT', `${base}/entries/hello-world`, { token, body: { data: { title: 'Hello again' } } })
      assert.equal(changed.status, 200)
      assert.equal(changed.headers.get('entry-status'), 'updated')
      assert.equal(changed.body.id, entry.id)
      assert.equal(changed.body.publishedAt, entry.publishedAt, 'an omitted publishedAt is kept')
      assert.deepEqual(changed.body.data, { title: 'Hello again' }, 'put replaces the data')

      for (const key of [entry.id, 'hello-world']) {
        const got = await server.api('GET', `${base}/entries/${key}`, { token })
        assert.equal(got.status, 200)
        assert.equal(got.body.data.title, 'Hello again')
      }
      assert.equal((await server.api('DELETE', `${base}/entries/${entry.id}`, { token })).status, 204)
      assert.equal((await server.api('GET', `${base}/entries/hello-world`, { token })).status, 404)
      assert.equal((await server.api('DELETE', `${base}/entries/hello-world`, { token })).status, 404)
    })

    test('data is validated against the fields with a message per field', async () => {
      const { user, base } = await siteWithCollection(server)
      const res = await server.api('PUT', `${base}/entries/bad`, {
        token: user.token,
        body: {
          publishedAt: 'yesterday',
          data: {
            body: '<p>not an object</p>',
            day: '2024-02-30',
            price: 1001,
            featured: 'yes',
            link: 'javascript:alert(1)',
            kind: 'opinion',
            cover: 'cover.png',
            title: 'x'.repeat(101),
            surprise: 1,
          },
        },
      })
      assert.equal(res.status, 422)
      assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      const f = res.body.error.fields
      assert.match(f.publishedAt, /ISO-8601/)
      assert.match(f['data.body'], /html.*markdown/)
      assert.match(f['data.day'], /calendar date/)
      assert.equal(f['data.price'], 'must be at most 1000')
      assert.equal(f['data.featured'], 'must be true or false')
      assert.match(f['data.link'], /http/)
      assert.equal(f['data.kind'], 'must be one of "news", "review"')
      assert.match(f['data.cover'], /relative URL.*baseUrl/)
      assert.match(f['data.title'], /at most 100 characters/)
      assert.equal(f['data.surprise'], 'is not a field of this collection')
      const missing = await server.api('PUT', `${base}/entries/bad`, { token: user.token, body: { data: { kind: 'news' } } })
      assert.equal(missing.body.error.fields['data.title'], 'is required')
      assert.equal((await server.api('GET', `${base}/entries/bad`, { token: user.token })).status, 404, 'nothing was stored')
    })

    test('a batch with good and bad entries writes the good ones and explains each bad one, in order', async () => {
      const { user, base } = await siteWithCollection(server)
      const res = await server.api('POST', `${base}/entries/batch`, {
        token: user.token,
        body: {
          baseUrl: 'https://old.example.com/blog/',
          entries: [
            { slug: 'one', data: { title: 'One' } },
            { slug: 'two', data: { title: 2 } },
            { slug: 'dup', data: { title: 'Dup A' } },
            { slug: 'three', data: { title: 'Three', cover: UNREACHABLE_IMAGE } },
            { slug: 'dup', data: { title: 'Dup B' } },
            { slug: 'four', data: { title: 'Four' }, extra: true },
            { data: { title: 'No slug' } },
            { slug: 'five', publishedAt: '2024-01-01T00:00:00Z', data: { title: 'Five', body: { html: '<p>Hi<script>alert(1)</script></p>' } } },
          ],
        },
      })
      assert.equal(res.status, 200, res.text)
      const r = res.body.results
      assert.deepEqual(
        r.map((x: { status: string }) => x.status),
        ['created', 'failed', 'failed', 'failed', 'failed', 'failed', 'failed', 'created'],
      )
      assert.deepEqual(res.body.counts, { created: 2, updated: 0, unchanged: 0, failed: 6 })
      assert.deepEqual(r[1].error, {
        code: 'VALIDATION_FAILED',
        message: r[1].error.message,
        field: 'data.title',
        fields: { 'data.title': 'must be a string' },
      })
      for (const i of [2, 4]) {
        assert.equal(r[i].error.code, 'DUPLICATE_SLUG')
        assert.equal(r[i].error.field, 'slug')
      }
      assert.equal(r[3].error.code, 'IMAGE_IMPORT_FAILED')
      assert.equal(r[3].error.field, 'data.cover')
      assert.equal(r[5].error.field, 'extra')
      assert.equal(r[6].slug, null)
      assert.equal(r[6].error.field, 'slug')
      assert.doesNotMatch(r[7].entry.rendered.body, /script/, 'rich text is sanitized')
      assert.equal(r[0].entry.slug, 'one')
      const list = await server.api('GET', `${base}/entries`, { token: user.token })
      assert.deepEqual(list.body.items.map((e: { slug: string }) => e.slug).sort(), ['five', 'one'])
    })

    test('relative image URLs need a baseUrl; a failed image fails only its entry', async () => {
      const { user, base } = await siteWithCollection(server)
      const res = await server.api('POST', `${base}/entries/batch`, {
        token: user.token,
        body: {
          entries: [
            { slug: 'inline', data: { title: 'Inline', body: { html: '<p>Look <img src="pics/a.png" alt="a"></p>' } } },
            { slug: 'field', data: { title: 'Field', cover: '/pics/b.png' } },
            { slug: 'broken', data: { title: 'Broken', body: { markdown: `![x](${UNREACHABLE_IMAGE})` } } },
            { slug: 'plain', data: { title: 'Plain', body: { markdown: 'no images' } } },
          ],
        },
      })
      assert.equal(res.status, 200)
      const [inline, field, broken, plain] = res.body.results
      assert.equal(inline.status, 'failed')
      assert.equal(inline.error.field, 'data.body')
      assert.match(inline.error.message, /relative URL.*baseUrl/)
      assert.equal(field.error.field, 'data.cover')
      assert.match(field.error.message, /baseUrl/)
      assert.equal(broken.error.code, 'IMAGE_IMPORT_FAILED')
      assert.equal(broken.error.field, 'data.body')
      assert.equal(plain.status, 'created')
      const put = await server.api('PUT', `${base}/entries/cover`, { token: user.token, body: { data: { title: 'C', cover: UNREACHABLE_IMAGE } } })
      assert.equal(put.status, 422)
      assert.equal(put.body.error.code, 'IMAGE_IMPORT_FAILED')
      assert.ok(put.body.error.fields['data.cover'])
    })

    test('re-running the same import changes nothing and never duplicates', async () => {
      const { user, base } = await siteWithCollection(server)
      const entries = Array.from({ length: 30 }, (_, i) => ({
        slug: `post-${i}`,
        publishedAt: new Date(Date.UTC(2023, 0, 1 + i)).toISOString(),
        createdAt: new Date(Date.UTC(2022, 0, 1 + i)).toISOString(),
        data: { title: `Post ${i}`, body: { markdown: `Text **${i}**` }, kind: i % 2 ? 'news' : 'review', price: i },
      }))
      const first = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { entries } })
      assert.deepEqual(first.body.counts, { created: 30, updated: 0, unchanged: 0, failed: 0 })
      const again = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { entries } })
      assert.equal(again.status, 200)
      assert.deepEqual(again.body.counts, { created: 0, updated: 0, unchanged: 30, failed: 0 })
      for (let i = 0; i < 30; i++) assert.deepEqual(again.body.results[i].entry, first.body.results[i].entry)

      const edited = entries.map((e, i) => (i === 3 ? { ...e, data: { ...e.data, title: 'Edited' } } : e))
      const third = await server.api('POST', `${base}/entries/batch`, {
        token: user.token,
        body: { entries: [...edited, { slug: 'new-one', data: { title: 'New' } }] },
      })
      assert.deepEqual(third.body.counts, { created: 1, updated: 1, unchanged: 29, failed: 0 })
      assert.equal(third.body.results[3].status, 'updated')
      const collection = await server.api('GET', base, { token: user.token })
      assert.equal(collection.body.entryCount, 31)
    })

    test('a future publishedAt keeps an entry off the public listing until then', async () => {
      const { user, base } = await siteWithCollection(server)
      const future = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString()
      const res = await server.api('POST', `${base}/entries/batch`, {
        token: user.token,
        body: {
          entries: [
            { slug: 'now', data: { title: 'Now' } },
            { slug: 'later', publishedAt: future, data: { title: 'Later' } },
          ],
        },
      })
      assert.deepEqual(
        res.body.results.map((r: { entry: { live: boolean } }) => r.entry.live),
        [true, false],
      )
      const api = await server.api('GET', `${base}/entries`, { token: user.token })
      assert.deepEqual(
        api.body.items.map((e: { slug: string }) => e.slug),
        ['later', 'now'],
        'the API lists scheduled entries too, newest first',
      )
      const { SiteContentRepository } = await import('../../src/site-content/site-content.repository.ts')
      const repo = new SiteContentRepository(server.server.db.kysely)
      const collectionId = (await server.api('GET', base, { token: user.token })).body.id
      const live = await repo.live(collectionId, new Date().toISOString(), 10)
      assert.deepEqual(
        live.map((row) => row.slug),
        ['now'],
      )
    })

    test('hostile input gets a clear envelope and changes nothing', async () => {
      const { user, base } = await siteWithCollection(server)
      const token = user.token
      const huge = await server.api('POST', `${base}/entries/batch`, {
        token,
        body: { entries: Array.from({ length: 101 }, (_, i) => ({ slug: `s${i}`, data: { title: 't' } })) },
      })
      assert.equal(huge.status, 422)
      assert.ok(huge.body.error.fields.entries)
      for (const body of [
        { entries: {} },
        { entries: 'x' },
        {},
        { entries: [], baseUrl: 'ftp://x/' },
        { entries: [], baseUrl: 'relative/' },
        { entries: [1] },
      ]) {
        const res = await server.api('POST', `${base}/entries/batch`, { token, body })
        assert.equal(res.status, 422, JSON.stringify(body))
        assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      }
      const slugs = await server.api('POST', `${base}/entries/batch`, {
        token,
        body: {
          entries: ['a/b', '..', '.', 'UPPER', 'a_b', '-a', 'a-', 'x'.repeat(81), '', 'ent_abc', 'caf\u00e9', 'a b', 'a.html'].map((slug) => ({
            slug,
            data: { title: 't' },
          })),
        },
      })
      assert.equal(slugs.status, 200)
      assert.equal(slugs.body.counts.failed, 13)
      for (const r of slugs.body.results) assert.equal(r.error.field, 'slug', r.slug)
      for (const path of ['a%2Fb', '..%2F..', '%2E%2E', 'UPPER']) {
        const res = await server.api('PUT', `${base}/entries/${path}`, { token, body: { data: { title: 't' } } })
        assert.ok([404, 422].includes(res.status), `${path}: ${res.status}`)
        assert.ok(res.body.error.code)
      }
      for (const cursor of ['nope', Buffer.from('["x","y"]').toString('base64url'), Buffer.from('{}').toString('base64url'), 'a'.repeat(201)]) {
        const res = await server.api('GET', `${base}/entries?cursor=${encodeURIComponent(cursor)}`, { token })
        assert.equal(res.status, 422, cursor)
        assert.ok(res.body.error.fields.cursor)
      }
      for (const limit of ['0', '101', 'ten', '-1', '1.5']) {
        const res = await server.api('GET', `${base}/entries?limit=${limit}`, { token })
        assert.equal(res.status, 422, limit)
        assert.ok(res.body.error.fields.limit)
      }
      const strayKeys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))
      const stray = await server.api('POST', `${base}/entries/batch`, { token, body: { entries: [{ slug: 'stray', data: { title: 't', ...strayKeys } }] } })
      assert.equal(stray.body.results[0].status, 'failed')
      assert.ok(Object.keys(stray.body.results[0].error.fields).length <= 20, 'the answer stays bounded')
      const unknownQuery = await server.api('GET', `${base}/entries?sort=slug`, { token })
      assert.equal(unknownQuery.status, 422)
      const noData = await server.api('PUT', `${base}/entries/x`, { token, body: { title: 'x' } })
      assert.equal(noData.status, 422)
      assert.equal((await server.api('GET', `${base}/entries`, { token })).body.items.length, 0, 'nothing was stored')
    })

    test('10,000 entries page through without a gap or a duplicate, newest first', async () => {
      const { user, base } = await siteWithCollection(server)
      const collectionId = (await server.api('GET', base, { token: user.token })).body.id
      const { EntriesRepository } = await import('../../src/content/entries.repository.ts')
      const { newId } = await import('../../src/core/ids.ts')
      const rows = Array.from({ length: 10_000 }, (_, i) => {
        // Many entries share a publishedAt, so the id tie-break is exercised.
        const at = new Date(Date.UTC(2020, 0, 1) + Math.floor(i / 7) * 60_000).toISOString()
        return {
          id: newId('ent'),
          collection_id: collectionId,
          slug: `e-${i}`,
          published_at: at,
          created_at: at,
          updated_at: at,
          data: JSON.stringify({ title: `E${i}` }),
          rendered: JSON.stringify({ title: `E${i}` }),
          content_hash: String(i),
        }
      })
      await new EntriesRepository(server.server.db.kysely).insertMany(rows)

      const seen: Array<{ id: string; publishedAt: string }> = []
      let cursor: string | null = null
      let pages = 0
      do {
        const query: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100'
        const page = await server.api('GET', `${base}/entries${query}`, { token: user.token })
        assert.equal(page.status, 200, page.text)
        seen.push(...page.body.items)
        cursor = page.body.nextCursor
        pages++
      } while (cursor)
      assert.equal(pages, 100)
      assert.equal(seen.length, 10_000)
      assert.equal(new Set(seen.map((e) => e.id)).size, 10_000, 'no duplicate')
      const expected = [...rows].sort((a, b) => (a.published_at === b.published_at ? (a.id < b.id ? 1 : -1) : a.published_at < b.published_at ? 1 : -1))
      assert.deepEqual(
        seen.map((e) => e.id),
        expected.map((r) => r.id),
        'stable order: publishedAt desc, then id desc',
      )
      const small = await server.api('GET', `${base}/entries`, { token: user.token })
      assert.equal(small.body.items.length, 20, 'default page size')
    })
  })
}
