/** Published sites as a browser sees them, through the real publish path and the real server. */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { renameSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const bigText = `<!doctype html><title>Big</title><main>${'<p>Plinth serves this paragraph again and again.</p>'.repeat(200)}</main>`

for (const store of STORES) {
  describe(`serving published sites (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let token: string
    before(async () => {
      server = await startTestServer(store.name)
      token = (await server.user()).token
    })
    after(() => server?.close())

    async function publish(slug: string, files: Array<{ path: string; content: string; contentEncoding?: 'utf8' | 'base64' }>) {
      const res = await server.api('POST', '/v1/websites', { token, body: { slug, category: 'portfolio', files } })
      assert.equal(res.status, 201, res.text)
      return res.body as { websiteId: string; slug: string }
    }

    test('a published site is served at its host with the right types, clean URLs and its own 404 page', async () => {
      const png = randomBytes(300)
      await publish('clean-urls', [
        { path: 'index.html', content: '<h1>Home</h1>' },
        { path: 'about.html', content: '<h1>About</h1>' },
        { path: 'blog/index.html', content: '<h1>Blog</h1>' },
        { path: '404.html', content: '<h1>Lost</h1>' },
        { path: 'img/logo.png', content: png.toString('base64'), contentEncoding: 'base64' },
      ])
      const home = await server.site('clean-urls', '/')
      assert.equal(home.status, 200)
      assert.equal(home.body.toString(), '<h1>Home</h1>')
      assert.equal(home.headers['content-type'], 'text/html; charset=utf-8')

      assert.equal((await server.site('clean-urls', '/about')).body.toString(), '<h1>About</h1>')
      assert.equal((await server.site('clean-urls', '/about.html')).body.toString(), '<h1>About</h1>')
      const dir = await server.site('clean-urls', '/blog?x=1')
      assert.equal(dir.status, 301)
      assert.equal(dir.headers.location, '/blog/?x=1')
      assert.equal((await server.site('clean-urls', '/blog/')).body.toString(), '<h1>Blog</h1>')

      const image = await server.site('clean-urls', '/img/logo.png')
      assert.equal(image.headers['content-type'], 'image/png')
      assert.deepEqual(image.body, png)

      const missing = await server.site('clean-urls', '/nope')
      assert.equal(missing.status, 404)
      assert.equal(missing.body.toString(), '<h1>Lost</h1>')
    })

    test("an address under the site domain that names no site is the site-not-found page, never the service's own pages", async () => {
      await publish('hosted', [{ path: 'index.html', content: '<!doctype html><title>Hosted</title><p>Hosted</p>' }])
      for (const label of ['a.hosted', 'hosted--v0', 'hosted--v01', 'www', 'nosuchsite'])
        for (const path of ['/', '/sign-in', '/v1/websites', '/oauth/authorize', '/.well-known/oauth-authorization-server']) {
          const res = await server.site(label, path, { headers: { accept: 'text/html' } })
          assert.equal(res.status, 404, `${label} ${path}`)
          assert.match(res.body.toString(), /Site not found/, `${label} ${path}`)
          assert.equal(res.headers['set-cookie'], undefined, `${label} ${path} sets no cookie`)
        }
      // The service's own host is the service, even when it is under the site domain (api.{site_domain} here).
      assert.equal((await server.site('api', '/v1', { headers: { accept: 'application/json' } })).status, 200)
      assert.equal((await server.site('hosted', '/')).status, 200)
    })

    test('every response carries the CSP that enforces the authoring rules, and nosniff', async () => {
      await publish('headers-site', bundle('Headers'))
      for (const [label, urlPath] of [
        ['headers-site', '/'],
        ['headers-site', '/missing'],
        ['no-such-site', '/'],
      ] as const) {
        const res = await server.site(label, urlPath)
        const csp = String(res.headers['content-security-policy'])
        assert.match(csp, /script-src 'self' 'unsafe-inline'/)
        assert.match(csp, /frame-src 'none'/)
        assert.match(csp, /worker-src 'self' blob:/)
        assert.match(csp, /object-src 'none'/)
        assert.equal(res.headers['x-content-type-options'], 'nosniff')
      }
      assert.equal((await server.site('no-such-site', '/')).status, 404)
    })

    test('HTML is revalidated every time; a matching ETag gets 304 without a body', async () => {
      await publish('etag-site', bundle('ETags'))
      const first = await server.site('etag-site', '/')
      assert.equal(first.headers['cache-control'], 'public, max-age=0, must-revalidate')
      const etag = String(first.headers.etag)
      assert.match(etag, /^"[^W]/, 'a strong validator')
      const again = await server.site('etag-site', '/', { headers: { 'if-none-match': etag } })
      assert.equal(again.status, 304)
      assert.equal(again.body.length, 0)
    })

    test('text is served precompressed when the client accepts it; HEAD and Range work on the stored bytes', async () => {
      await publish('compressed', [{ path: 'index.html', content: bigText }])
      // Served at once, uncompressed, while its variants are made off the publish's request.
      const early = await server.site('compressed', '/', { headers: { 'accept-encoding': 'gzip, br' } })
      assert.equal(early.status, 200)
      assert.ok(early.headers['content-encoding'] === undefined || early.headers['content-encoding'] === 'br', 'identity until the variants exist')
      assert.equal(early.headers.vary, 'Accept-Encoding')
      await server.server.blobVariants.settled()
      const br = await server.site('compressed', '/', { headers: { 'accept-encoding': 'gzip, br' } })
      assert.equal(br.headers['content-encoding'], 'br')
      assert.equal(brotliDecompressSync(br.body).toString(), bigText)
      assert.ok(br.body.length < bigText.length / 5)
      const gz = await server.site('compressed', '/', { headers: { 'accept-encoding': 'gzip' } })
      assert.equal(gz.headers['content-encoding'], 'gzip')
      assert.equal(gunzipSync(gz.body).toString(), bigText)
      const plain = await server.site('compressed', '/')
      assert.equal(plain.headers['content-encoding'], undefined)
      assert.equal(plain.body.toString(), bigText)

      const head = await server.site('compressed', '/', { method: 'HEAD' })
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(bigText)))
      assert.equal(head.body.length, 0)

      const range = await server.site('compressed', '/', { headers: { range: 'bytes=0-14' } })
      assert.equal(range.status, 206)
      assert.equal(range.headers['content-range'], `bytes 0-14/${Buffer.byteLength(bigText)}`)
      assert.equal(range.body.toString(), bigText.slice(0, 15))
    })

    test('a promotion is visible on the very next request, and rollback restores the old bytes', async () => {
      const site = await publish('promote-me', bundle('Version one'))
      assert.match((await server.site('promote-me', '/')).body.toString(), /Version one/)

      const v2 = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, { token, body: { files: bundle('Version two'), promote: false } })
      assert.equal(v2.status, 201)
      assert.match((await server.site('promote-me', '/')).body.toString(), /Version one/, 'not promoted: live is unchanged')
      const preview = await server.site('promote-me--v2', '/')
      assert.match(preview.body.toString(), /Version two/)
      assert.equal(preview.headers['x-robots-tag'], 'noindex')

      const promoted = await server.api('POST', `/v1/websites/${site.websiteId}/versions/${v2.body.jobId}/promote`, { token })
      assert.equal(promoted.status, 200)
      assert.equal(promoted.body.isCurrent, true)
      assert.match((await server.site('promote-me', '/')).body.toString(), /Version two/)

      const versions = await server.api('GET', `/v1/websites/${site.websiteId}/versions`, { token })
      const v1 = versions.body.versions.find((v: { version: number }) => v.version === 1)
      await server.api('POST', `/v1/websites/${site.websiteId}/versions/${v1.id}/promote`, { token })
      assert.match((await server.site('promote-me', '/')).body.toString(), /Version one/)
    })

    test('a warm request touches neither the database nor the disk', async () => {
      const dedicated = await startTestServer(store.name)
      try {
        const owner = await dedicated.user()
        const res = await dedicated.api('POST', '/v1/websites', {
          token: owner.token,
          body: {
            slug: 'warm-site',
            category: 'other',
            files: bundle('Warm', [{ path: 'never-read.txt', content: 'not requested before the stores went away' }]),
          },
        })
        assert.equal(res.status, 201)
        const base = `/v1/websites/${res.body.websiteId}/collections`
        const collection = await dedicated.api('POST', base, {
          token: owner.token,
          body: { name: 'notes', label: 'Notes', fields: [{ name: 'title', label: 'Title', type: 'text' }] },
        })
        assert.equal(collection.status, 201, collection.text)
        const entry = await dedicated.api('PUT', `${base}/notes/entries/first`, {
          token: owner.token,
          body: { data: { title: 'First note' }, publishedAt: '2024-01-01T00:00:00Z' },
        })
        assert.ok(entry.status === 200 || entry.status === 201, entry.text)
        const cold = await dedicated.site('warm-site', '/style.css')
        const coldIndex = await dedicated.site('warm-site', '/')
        assert.equal(cold.status, 200)
        const coldEntry = await dedicated.site('warm-site', '/notes-first', { headers: { 'accept-encoding': 'br' } })
        assert.equal(coldEntry.status, 200)
        assert.equal(coldEntry.headers['content-encoding'], 'br')

        // Take both stores away: the database is closed and the blob folder moved aside, once the
        // store's background work (variants, spare files) is done and cannot make it again.
        await dedicated.server.blobVariants.settled()
        await dedicated.server.blobs.settled()
        await dedicated.server.db.close()
        const blobsDir = path.join(dedicated.config.dataDir, 'blobs')
        renameSync(blobsDir, `${blobsDir}-gone`)

        const warm = await dedicated.site('warm-site', '/style.css')
        assert.equal(warm.status, 200)
        assert.deepEqual(warm.body, cold.body)
        assert.deepEqual((await dedicated.site('warm-site', '/')).body, coldIndex.body)
        // So is an entry page once built: its bytes and variants are in memory, like a file's.
        const warmEntry = await dedicated.site('warm-site', '/notes-first', { headers: { 'accept-encoding': 'br', host: 'WARM-SITE.plinth.test:1' } })
        assert.equal(warmEntry.status, 200)
        assert.deepEqual(warmEntry.body, coldEntry.body)
        assert.equal(warmEntry.headers.etag, coldEntry.headers.etag)
        const warmRange = await dedicated.site('warm-site', '/notes-first', { headers: { range: 'bytes=0-14' } })
        assert.equal(warmRange.status, 206)
        assert.equal(warmRange.body.toString(), '<!doctype html>')
        // A file never requested before needs the disk, which is gone: proof the others did not.
        assert.equal((await dedicated.site('warm-site', '/never-read.txt')).status, 500)
        renameSync(`${blobsDir}-gone`, blobsDir)
      } finally {
        await dedicated.close().catch(() => {})
      }
    })
  })
}
