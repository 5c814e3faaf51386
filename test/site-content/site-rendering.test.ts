import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FIELDS, startImageHost } from '../helpers/content.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** A valid 1x1 PNG; a second one differs in one pixel (other bytes, other hash). */
const PNG = [
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
].map((b) => Buffer.from(b, 'base64'))

type Files = ReturnType<typeof bundle>

for (const store of STORES) {
  describe(`content on the site (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let images: Awaited<ReturnType<typeof startImageHost>>
    let origin: string
    before(async () => {
      images = await startImageHost((n) => PNG[n])
      origin = images.origin
      server = await startTestServer(store.name, images.env)
    })
    after(async () => {
      await server?.close()
      await images?.close()
    })

    async function site(files: Files = bundle()) {
      const user = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'Content site', category: 'other', files } })
      assert.equal(created.status, 201, created.text)
      const websiteId = created.body.websiteId as string
      const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: user.token,
        body: { name: 'posts', label: 'Posts', fields: FIELDS },
      })
      assert.equal(collection.status, 201, collection.text)
      const base = `/v1/websites/${websiteId}/collections/posts`
      const put = async (slug: string, data: Record<string, unknown>, publishedAt?: string) => {
        const res = await server.api('PUT', `${base}/entries/${slug}`, {
          token: user.token,
          body: { data, ...(publishedAt ? { publishedAt } : {}), baseUrl: `${origin}/` },
        })
        assert.ok(res.status === 200 || res.status === 201, res.text)
        return res.body
      }
      const publish = async (next: Files) => {
        const res = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token: user.token, body: { files: next } })
        assert.ok(res.status === 201 || res.status === 200, res.text)
      }
      return { user, websiteId, slug: created.body.slug as string, put, publish }
    }
    const text = (res: { body: Buffer }) => res.body.toString('utf8')

    test('an entry page and the listing render with the default templates, escaped, under the site CSP', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello <world>', body: { markdown: 'Some **bold** text' }, price: 12 }, '2024-01-02T10:00:00Z')
      await s.put('second', { title: 'Second' }, '2024-02-01T10:00:00Z')
      const page = await server.site(s.slug, '/posts-hello')
      assert.equal(page.status, 200, text(page))
      assert.match(String(page.headers['content-type']), /^text\/html/)
      assert.match(String(page.headers['content-security-policy']), /default-src 'self'/)
      assert.equal(page.headers['cache-control'], 'public, max-age=0, must-revalidate')
      assert.match(text(page), /<h1>Hello &lt;world&gt;<\/h1>/)
      assert.match(text(page), /<strong>bold<\/strong>/, 'rich text is inserted as (sanitized) HTML')
      assert.match(text(page), /Price:<\/strong> 12/)
      const list = await server.site(s.slug, '/posts')
      assert.equal(list.status, 200)
      const body = text(list)
      assert.ok(body.indexOf('/posts-second') < body.indexOf('/posts-hello'), 'newest first')
      assert.equal((await server.site(s.slug, '/posts-missing')).status, 404)
      assert.equal((await server.site(s.slug, '/other-hello')).status, 404, 'no such collection')
      assert.equal((await server.site(s.slug, '/posts-hello', { method: 'HEAD' })).body.length, 0)
    })

    test('listings are paged by 20; a bad or missing page is a 404', async () => {
      const s = await site()
      for (let i = 0; i < 21; i++) await s.put(`e${i}`, { title: `Entry ${i}` }, `2024-03-${String(i + 1).padStart(2, '0')}T00:00:00Z`)
      const first = text(await server.site(s.slug, '/posts'))
      assert.match(first, /Page 1 of 2/)
      assert.match(first, /href="\/posts\?page=2"/)
      assert.doesNotMatch(first, /\/posts-e0"/)
      const second = await server.site(s.slug, '/posts?page=2')
      assert.equal(second.status, 200)
      assert.match(text(second), /\/posts-e0"/)
      for (const bad of ['/posts?page=3', '/posts?page=0', '/posts?page=abc', '/posts?page=-1', '/posts?page=1e3', '/posts?page=99999999999']) {
        assert.equal((await server.site(s.slug, bad)).status, 404, bad)
      }
    })

    test('JSON Feed and Atom list live entries newest first; a future entry is hidden everywhere', async () => {
      const s = await site()
      await s.put('old', { title: 'Old one', body: { html: '<p>old</p>' } }, '2024-01-01T00:00:00Z')
      await s.put('new', { title: 'New one' }, '2024-06-01T00:00:00Z')
      await s.put('later', { title: 'Scheduled' }, '2999-01-01T00:00:00Z')
      const json = await server.site(s.slug, '/posts.json')
      assert.equal(json.status, 200)
      assert.match(String(json.headers['content-type']), /^application\/feed\+json/)
      const feed = JSON.parse(text(json))
      assert.equal(feed.version, 'https://jsonfeed.org/version/1.1')
      assert.deepEqual(
        feed.items.map((i: { title: string }) => i.title),
        ['New one', 'Old one'],
      )
      assert.match(feed.items[1].url, new RegExp(`^http://${s.slug}\\..+/posts-old$`))
      assert.equal(feed.items[1].content_html, '<p>old</p>')
      const atom = await server.site(s.slug, '/posts.xml')
      assert.match(String(atom.headers['content-type']), /^application\/atom\+xml/)
      const titles = [...text(atom).matchAll(/<entry>[\s\S]*?<title>(.*?)<\/title>/g)].map((m) => m[1])
      assert.deepEqual(titles, ['New one', 'Old one'])
      assert.match(text(atom), /<content type="html">&lt;p&gt;old&lt;\/p&gt;<\/content>/)
      assert.equal((await server.site(s.slug, '/posts-later')).status, 404)
      assert.doesNotMatch(text(await server.site(s.slug, '/posts')), /Scheduled/)
    })

    test('a change to an entry is visible on the next request; an unchanged page answers 304 to its ETag', async () => {
      const s = await site()
      await s.put('news', { title: 'First title' }, '2024-01-01T00:00:00Z')
      const first = await server.site(s.slug, '/posts-news')
      const etag = String(first.headers.etag)
      assert.match(etag, /^"[^"]+"$/)
      const again = await server.site(s.slug, '/posts-news', { headers: { 'if-none-match': etag } })
      assert.equal(again.status, 304)
      assert.equal(again.body.length, 0)
      assert.match(String(again.headers['content-security-policy']), /default-src/)
      await s.put('news', { title: 'Second title' }, '2024-01-01T00:00:00Z')
      const changed = await server.site(s.slug, '/posts-news', { headers: { 'if-none-match': etag } })
      assert.equal(changed.status, 200)
      assert.match(text(changed), /Second title/)
      assert.notEqual(changed.headers.etag, etag)
      assert.match(text(await server.site(s.slug, '/posts')), /Second title/, 'listings follow too')
    })

    test('a warm unchanged page is answered from memory; a deletion through the API is visible at once', async () => {
      const s = await site()
      const entry = await s.put('kept', { title: 'Kept' }, '2024-01-01T00:00:00Z')
      assert.equal((await server.site(s.slug, '/posts-kept')).status, 200)
      // Removed behind the service's back (no change event): the cached page does not ask the database.
      const db = server.server.db.kysely
      const row = await db.selectFrom('entries').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow()
      await db.deleteFrom('entries').where('id', '=', entry.id).execute()
      assert.equal((await server.site(s.slug, '/posts-kept')).status, 200)
      await db.insertInto('entries').values(row).execute()
      const deleted = await server.api('DELETE', `/v1/websites/${s.websiteId}/collections/posts/entries/kept`, { token: s.user.token })
      assert.equal(deleted.status, 204, deleted.text)
      assert.equal((await server.site(s.slug, '/posts-kept')).status, 404)
      assert.doesNotMatch(text(await server.site(s.slug, '/posts.json')), /Kept/)
    })

    test('library images are served at /_assets/ for their website only', async () => {
      const s = await site()
      const entry = await s.put('pic', { title: 'Pic', body: { html: '<p><img src="img/0.png" alt="zero"></p>' } }, '2024-01-01T00:00:00Z')
      const url = /src="(\/_assets\/[0-9a-f]{64}\.png)"/.exec(entry.rendered.body)![1]!
      const page = text(await server.site(s.slug, '/posts-pic'))
      assert.ok(page.includes(`src="${url}"`), 'the page points at the library copy')
      const image = await server.site(s.slug, url)
      assert.equal(image.status, 200)
      assert.equal(image.headers['content-type'], 'image/png')
      assert.deepEqual(image.body, PNG[0])
      assert.equal((await server.site(s.slug, url.replace('.png', '.jpg'))).status, 404, 'wrong extension')
      const other = await site()
      const theirs = await other.put('pic', { title: 'Pic', cover: 'img/1.png' }, '2024-01-01T00:00:00Z')
      assert.equal((await server.site(other.slug, theirs.rendered.cover)).status, 200)
      assert.equal((await server.site(s.slug, theirs.rendered.cover)).status, 404, "another website's image")
      assert.equal((await server.site(s.slug, '/_assets/../index.html')).status, 400)
      assert.equal((await server.site(s.slug, `/_assets/${'0'.repeat(64)}.png`)).status, 404)
    })

    test("the live version's templates render entries and listings, with includes", async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello', body: { html: '<p>Body <em>text</em></p>' } }, '2024-01-01T00:00:00Z')
      await s.publish(
        bundle('Home', [
          {
            path: '_templates/posts.html',
            content:
              '<!doctype html><html><head>{% render "head", title: entry.title %}</head><body><h1 class="custom">{{ entry.title }}</h1>{{ entry.data.body }}<p>{{ site.slug }}/{{ collection.name }}</p></body></html>',
          },
          { path: '_templates/head.html', content: '<title>{{ title }} (custom)</title>' },
          {
            path: '_templates/posts-list.html',
            content:
              '<!doctype html><ul>{% for e in entries %}<li class="custom"><a href="{{ e.url }}">{{ e.title }}</a></li>{% endfor %}</ul><p>{{ pagination.page }}/{{ pagination.pages }}</p>',
          },
        ]),
      )
      const page = text(await server.site(s.slug, '/posts-hello'))
      assert.match(page, /<title>Hello \(custom\)<\/title>/)
      assert.match(page, /<h1 class="custom">Hello<\/h1><p>Body <em>text<\/em><\/p>/)
      assert.ok(page.includes(`<p>${s.slug}/posts</p>`))
      assert.match(text(await server.site(s.slug, '/posts')), /<li class="custom"><a href="\/posts-hello">Hello<\/a><\/li><\/ul><p>1\/1<\/p>/)
    })

    test('a broken template or one that injects an external script is a 500 that says why', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      await s.publish(
        bundle('Home', [
          {
            path: '_templates/posts.html',
            content: '{% assign s = "https://evil.example/x.js" %}<!doctype html><script src="{{ s }}"></script><h1>{{ entry.title }}</h1>',
          },
          { path: '_templates/posts-list.html', content: '<p>{{ entries | no_such_filter }}</p>' },
        ]),
      )
      const refused = await server.site(s.slug, '/posts-hello')
      assert.equal(refused.status, 500)
      assert.match(text(refused), /_templates\/posts\.html/)
      assert.match(text(refused), /EXTERNAL_URL/)
      assert.doesNotMatch(text(refused), /<script/)
      assert.match(String(refused.headers['content-security-policy']), /default-src/)
      const broken = await server.site(s.slug, '/posts')
      assert.equal(broken.status, 500)
      assert.match(text(broken), /_templates\/posts-list\.html.*no_such_filter/s)
    })

    test('sitemap.xml lists pages, listings and live entries, unless the bundle has its own', async () => {
      const s = await site(bundle('Home', [{ path: 'about/index.html', content: '<!doctype html><title>About</title>' }]))
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      await s.put('later', { title: 'Later' }, '2999-01-01T00:00:00Z')
      const map = await server.site(s.slug, '/sitemap.xml')
      assert.equal(map.status, 200)
      assert.match(String(map.headers['content-type']), /^application\/xml/)
      const locs = [...text(map).matchAll(/<loc>(.*?)<\/loc>/g)].map((m) => new URL(m[1]!).pathname)
      assert.deepEqual(locs.sort(), ['/', '/about/', '/posts', '/posts-hello'])
      await s.publish(
        bundle('Home', [
          {
            path: 'sitemap.xml',
            content: '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/own</loc></url></urlset>',
          },
        ]),
      )
      assert.match(text(await server.site(s.slug, '/sitemap.xml')), /example\.com\/own/)
    })
  })
}
