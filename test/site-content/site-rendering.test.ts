import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { siteWithCollection, startImageHost } from '../helpers/content.ts'
import { PNG } from '../helpers/factories.ts'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { bundle, SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** The 1x1 PNG, and a second one that differs in one pixel (other bytes, other hash). */
const PNGS = [PNG, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')]

type Files = ReturnType<typeof bundle>

for (const store of STORES) {
  describe(`content on the site (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let images: Awaited<ReturnType<typeof startImageHost>>
    let origin: string
    before(async () => {
      images = await startImageHost((n) => PNGS[n])
      origin = images.origin
      server = await startTestServer(store.name, images.env)
    })
    after(async () => {
      await server?.close()
      await images?.close()
    })

    async function site(files: Files = bundle()) {
      const { user, websiteId, slug, base } = await siteWithCollection(server, 'posts', files)
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
      return { user, websiteId, slug, put, publish }
    }
    const text = (res: { body: Buffer }) => res.body.toString('utf8')
    /** Pages the site server's content responder has built so far. */
    const renders = () => server.server.siteServer.stats().content.renders

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
      assert.deepEqual(image.body, PNGS[0])
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

    test('a template saved as UTF-16 with a byte-order mark renders as publishing checked it', async () => {
      const s = await site()
      await s.put('wide', { title: 'Wide' }, '2024-01-01T00:00:00Z')
      const template = '<!doctype html><h1 class="wide">{{ entry.title }} – ünïcödé</h1>'
      const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(template, 'utf16le')]).toString('base64')
      await s.publish(bundle('Home', [{ path: '_templates/posts.html', content: utf16, contentEncoding: 'base64' }]))
      const page = await server.site(s.slug, '/posts-wide')
      assert.equal(page.status, 200, text(page))
      assert.match(text(page), /<h1 class="wide">Wide – ünïcödé<\/h1>/)
    })

    test('a template that fails to render or injects an external script is a 500 that says why, built once', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      await s.publish(
        bundle('Home', [
          {
            path: '_templates/posts.html',
            content: '{% assign s = "https://evil.example/x.js" %}<!doctype html><script src="{{ s }}"></script><h1>{{ entry.title }}</h1>',
          },
          { path: '_templates/posts-list.html', content: '<p>{% render "no-such-partial" %}</p>' },
        ]),
      )
      const before = renders()
      for (let i = 0; i < 5; i++) {
        const refused = await server.site(s.slug, '/posts-hello')
        assert.equal(refused.status, 500)
        assert.match(text(refused), /_templates\/posts\.html/)
        assert.match(text(refused), /EXTERNAL_URL/)
        assert.doesNotMatch(text(refused), /<script/)
        assert.match(String(refused.headers['content-security-policy']), /default-src/)
        assert.equal(refused.headers['cache-control'], 'no-store')
        const broken = await server.site(s.slug, '/posts', { headers: { host: `${s.slug}.plinth.test:${9000 + i}` } })
        assert.equal(broken.status, 500)
        assert.match(text(broken), /_templates\/posts-list\.html.*no-such-partial/s)
        assert.equal((await server.site(s.slug, '/posts', { method: 'HEAD' })).body.length, 0)
      }
      assert.equal(renders() - before, 2, 'each failing page was rendered once')
      // A change to the entries renders them again.
      await s.put('hello', { title: 'Hello again' }, '2024-01-01T00:00:00Z')
      assert.equal((await server.site(s.slug, '/posts-hello')).status, 500)
      assert.equal(renders() - before, 3)
    })

    test('a template that runs for long renders off the event loop: other requests are answered meanwhile, and it fails once', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      // Accepted at publish (it parses), it would loop far longer than any limit lets it.
      const runaway = '<!doctype html>{% for i in (1..100000) %}{% for j in (1..100000) %}{% assign k = j %}{% endfor %}{% endfor %}<h1>{{ entry.title }}</h1>'
      await s.publish(bundle('Home', [{ path: '_templates/posts.html', content: runaway }]))
      const other = await site(bundle('Other home'))
      await other.put('news', { title: 'News' }, '2024-01-01T00:00:00Z')

      const before = renders()
      let slowDone = false
      const slow = server.site(s.slug, '/posts-hello').finally(() => {
        slowDone = true
      })
      // Once the page is being built, the rest of the server is asked for other things.
      while (renders() === before) await new Promise((resolve) => setImmediate(resolve))
      const api = await server.api('GET', '/v1')
      assert.equal(api.status, 200, api.text)
      const home = await server.site(other.slug, '/')
      assert.equal(home.status, 200)
      assert.match(text(home), /Other home/)
      const feed = await server.site(other.slug, '/posts.json')
      assert.equal(feed.status, 200)
      assert.match(text(feed), /News/)
      assert.equal(slowDone, false, 'the other requests were answered while the template was still rendering')

      const failed = await slow
      assert.equal(failed.status, 500)
      assert.match(text(failed), /The template _templates\/posts\.html could not be rendered/)
      assert.equal(failed.headers['cache-control'], 'no-store')
      for (let i = 0; i < 3; i++) {
        const again = await server.site(s.slug, '/posts-hello')
        assert.equal(again.status, 500)
        assert.deepEqual(again.body, failed.body)
      }
      assert.equal(renders() - before, 2, 'the failing page was rendered once (the other render is the feed)')
    })

    test('entry pages, listings, feeds and the sitemap are served like published files: br, gzip, ETag, Range, HEAD, 304', async () => {
      const s = await site()
      const words = 'Plinth renders this entry once and serves the bytes again. '.repeat(20)
      await s.put('long', { title: 'Long', body: { markdown: words } }, '2024-01-01T00:00:00Z')
      for (const path of ['/posts-long', '/posts', '/posts.json', '/posts.xml', '/sitemap.xml']) {
        const plain = await server.site(s.slug, path)
        assert.equal(plain.status, 200, path)
        assert.equal(plain.headers['content-encoding'], undefined, path)
        assert.equal(plain.headers.vary, 'Accept-Encoding', path)
        assert.equal(plain.headers['accept-ranges'], 'bytes', path)
        assert.equal(plain.headers['content-length'], String(plain.body.length), path)
        assert.equal(plain.headers['cache-control'], 'public, max-age=0, must-revalidate', path)
        const etag = String(plain.headers.etag)
        assert.match(etag, /^"[0-9a-f]{40}"$/, `${path}: a strong validator`)

        const br = await server.site(s.slug, path, { headers: { 'accept-encoding': 'gzip, br' } })
        assert.equal(br.headers['content-encoding'], 'br', path)
        assert.deepEqual(brotliDecompressSync(br.body), plain.body, path)
        assert.ok(br.body.length < plain.body.length, path)
        const gz = await server.site(s.slug, path, { headers: { 'accept-encoding': 'gzip' } })
        assert.equal(gz.headers['content-encoding'], 'gzip', path)
        assert.deepEqual(gunzipSync(gz.body), plain.body, path)
        assert.equal(new Set([etag, br.headers.etag, gz.headers.etag]).size, 3, `${path}: one validator per representation`)

        const head = await server.site(s.slug, path, { method: 'HEAD', headers: { 'accept-encoding': 'br' } })
        assert.equal(head.status, 200)
        assert.equal(head.body.length, 0)
        assert.equal(head.headers['content-length'], String(br.body.length), path)
        assert.equal(head.headers.etag, br.headers.etag)

        assert.equal((await server.site(s.slug, path, { headers: { 'if-none-match': etag } })).status, 304, path)
        const reval = await server.site(s.slug, path, { headers: { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) } })
        assert.equal(reval.status, 304, path)
        assert.equal(reval.body.length, 0)

        const size = plain.body.length
        const range = await server.site(s.slug, path, { headers: { range: 'bytes=10-29', 'accept-encoding': 'br, gzip' } })
        assert.equal(range.status, 206, path)
        assert.equal(range.headers['content-range'], `bytes 10-29/${size}`)
        assert.equal(range.headers['content-encoding'], undefined)
        assert.deepEqual(range.body, plain.body.subarray(10, 30), path)
        const suffix = await server.site(s.slug, path, { headers: { range: 'bytes=-7' } })
        assert.deepEqual(suffix.body, plain.body.subarray(size - 7), path)
        const beyond = await server.site(s.slug, path, { headers: { range: `bytes=${size}-` } })
        assert.equal(beyond.status, 416, path)
        assert.equal(beyond.headers['content-range'], `bytes */${size}`)
        assert.equal((await server.site(s.slug, path, { headers: { range: 'bytes=0-3', 'if-range': etag } })).status, 206, path)
        const stale = await server.site(s.slug, path, { headers: { range: 'bytes=0-3', 'if-range': '"stale"' } })
        assert.equal(stale.status, 200, path)
        assert.deepEqual(stale.body, plain.body)
      }
    })

    test('a page is rendered once for every spelling of its host, with absolute URLs on the canonical origin', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      const hosts = [`${s.slug}.${SITE_DOMAIN}`, `${s.slug.toUpperCase()}.PLINTH.TEST:8080`, `${s.slug}.plinth.test`, `${s.slug}.plinth.test.:8080`]
      for (let port = 1; port <= 60; port++) hosts.push(`${s.slug}.plinth.test:${port}`)
      const before = renders()
      const bodies = new Set<string>()
      for (const host of hosts) {
        const feed = await server.site(s.slug, '/posts.json', { headers: { host } })
        assert.equal(feed.status, 200, host)
        bodies.add(text(feed))
      }
      assert.equal(renders() - before, 1, 'one render for all the host variants')
      assert.equal(bodies.size, 1)
      const feed = JSON.parse([...bodies][0]!)
      assert.equal(feed.items[0].url, `http://${s.slug}.${SITE_DOMAIN}/posts-hello`)
      assert.equal(feed.home_page_url, `http://${s.slug}.${SITE_DOMAIN}/posts`)
      // A preview has its own origin (and its own cache entry).
      const preview = JSON.parse(text(await server.site(`${s.slug}--v1`, '/posts.json')))
      assert.equal(preview.items[0].url, `http://${s.slug}--v1.${SITE_DOMAIN}/posts-hello`)
      assert.equal(renders() - before, 2)
    })

    test('the templates folder is never served; /{collection}/ and /{collection}.html redirect to /{collection}', async () => {
      const s = await site()
      await s.put('hello', { title: 'Hello' }, '2024-01-01T00:00:00Z')
      await s.publish(
        bundle('Home', [
          { path: '_templates/posts.html', content: '<!doctype html><h1 class="own">{{ entry.title }}</h1>' },
          { path: '_templates/index.html', content: '<p>{{ site.slug }}</p>' },
          { path: '404.html', content: '<!doctype html><h1>Lost</h1>' },
        ]),
      )
      assert.match(text(await server.site(s.slug, '/posts-hello')), /<h1 class="own">Hello<\/h1>/, 'the template is used')
      for (const path of ['/_templates/posts.html', '/_templates/posts', '/_templates/', '/_templates', '/_templates/index.html', '/%5Ftemplates/posts.html']) {
        const res = await server.site(s.slug, path)
        assert.equal(res.status, 404, path)
        assert.equal(text(res), '<!doctype html><h1>Lost</h1>', path)
      }
      for (const [path, location] of [
        ['/posts/', '/posts'],
        ['/posts.html', '/posts'],
        ['/posts/?page=2', '/posts?page=2'],
        ['/posts.html?x=1', '/posts?x=1'],
      ]) {
        const res = await server.site(s.slug, path)
        assert.equal(res.status, 301, path)
        assert.equal(res.headers.location, location, path)
        assert.match(String(res.headers['content-security-policy']), /default-src/)
      }
      assert.equal((await server.site(s.slug, '/other/')).status, 404, 'not a collection')
      assert.equal((await server.site(s.slug, '/other.html')).status, 404)
    })

    test('a template with a syntax error, an unknown filter or an unknown tag is refused at publish, naming the file and line', async () => {
      const user = await server.user()
      const files = bundle('Home', [
        { path: '_templates/posts.html', content: '<!doctype html>\n<h1>{{ entry.title }}</h1>\n{% if entry.title %}\n<p>open if</p>\n' },
        { path: '_templates/posts-list.html', content: '<!doctype html>\n<ul>\n{{ entries | no_such_filter }}\n</ul>' },
        { path: '_templates/card.html', content: '<div>\n\n{% frobnicate entry %}\n</div>' },
        { path: '_templates/fine.html', content: '<p>{{ entry.title | upcase }}</p>' },
        { path: '_templates/output.html', content: '<p>\n{{ entry.title </p>' },
      ])
      const res = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'Bad templates', category: 'other', files } })
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.error.code, 'PUBLISH_INVALID')
      const found = (res.body.error.violations as Array<{ code: string; path: string; detail: string; message: string }>).filter(
        (v) => v.code === 'TEMPLATE_INVALID',
      )
      assert.deepEqual(
        found.map((v) => v.path),
        ['_templates/posts.html', '_templates/posts-list.html', '_templates/card.html', '_templates/output.html'],
      )
      const byPath = new Map(found.map((v) => [v.path, v]))
      assert.match(byPath.get('_templates/posts.html')!.detail, /^line 3: .*if/)
      assert.match(byPath.get('_templates/posts-list.html')!.detail, /^line 3: undefined filter: no_such_filter/)
      assert.match(byPath.get('_templates/card.html')!.detail, /^line 3: tag "frobnicate" not found/)
      assert.match(byPath.get('_templates/output.html')!.detail, /^line 2: /)
      for (const v of found) assert.match(v.message, new RegExp(`^${v.path.replace('.', '\\.')} is not a valid Liquid template \\(line \\d+\\)`))
      // The same template files outside _templates/ are plain pages, not templates.
      const plain = await server.api('POST', '/v1/websites', {
        token: user.token,
        body: { name: 'Plain', category: 'other', files: bundle('Home', [{ path: 'raw.html', content: '<p>{% frobnicate %}</p>' }]) },
      })
      assert.equal(plain.status, 201, plain.text)
    })

    test("sitemap.xml lists pages, listings and live entries, merged into the bundle's own when it has one", async () => {
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
      const merged = await server.site(s.slug, '/sitemap.xml')
      assert.equal(merged.status, 200)
      assert.match(String(merged.headers['content-type']), /^application\/xml/)
      const mergedLocs = [...text(merged).matchAll(/<loc>(.*?)<\/loc>/g)].map((m) => m[1]!)
      assert.deepEqual(mergedLocs, ['https://example.com/own', `http://${s.slug}.${SITE_DOMAIN}/posts`, `http://${s.slug}.${SITE_DOMAIN}/posts-hello`])
      assert.match(text(merged), /^<\?xml version="1.0"\?><urlset /, "the owner's document, extended")
      // A URL the owner lists already is not repeated.
      await s.publish(
        bundle('Home', [
          {
            path: 'sitemap.xml',
            content: `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>http://${s.slug}.${SITE_DOMAIN}/posts</loc><priority>1.0</priority></url>\n</urlset>\n`,
          },
        ]),
      )
      const again = text(await server.site(s.slug, '/sitemap.xml'))
      assert.deepEqual(
        [...again.matchAll(/<loc>(.*?)<\/loc>/g)].map((m) => new URL(m[1]!).pathname),
        ['/posts', '/posts-hello'],
      )
      // A sitemap index is not a list of pages: it is served as the owner wrote it.
      const index =
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/a.xml</loc></sitemap></sitemapindex>'
      await s.publish(bundle('Home', [{ path: 'sitemap.xml', content: index }]))
      assert.equal(text(await server.site(s.slug, '/sitemap.xml')), index)
    })
  })
}
