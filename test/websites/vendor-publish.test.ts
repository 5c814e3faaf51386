/**
 * `vendor: true` on a publish, over real HTTP on both stores: createWebsite, createWebsiteVersion
 * (the whole bundle and a patch), a draft's publish and the MCP publish tools bring a page's
 * external script, stylesheet (with the font its @font-face names) and image into the bundle
 * from a host PLINTH_FETCH_ALLOW_HOSTS allows, and the site serves them itself. Hostile
 * references (a private address not allowed, a huge answer, a redirect loop, too many files) are
 * refused with 422 naming each URL, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createUser, PNG, type TestUser } from '../helpers/factories.ts'
import { call, connect } from '../helpers/mcp.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { FONT, SCRIPT, startVendorHost, vendoredPage, type VendorHost } from '../helpers/vendor-host.ts'

for (const store of STORES) {
  describe(`publishing with vendor: true (${store.name})`, { skip: store.skip }, () => {
    let host: VendorHost
    let server: TestServer
    let owner: TestUser
    let folder: string
    before(async () => {
      host = await startVendorHost()
      server = await startTestServer(store.name, host.env)
      owner = await createUser(server)
      folder = `_vendor/127.0.0.1_${new URL(host.origin).port}`
    })
    after(async () => {
      await server?.close()
      await host?.close()
    })

    const publish = (body: object) => server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', ...body } })

    test('createWebsite brings in the script, the stylesheet, its font and the image, and the site serves them', async () => {
      const res = await publish({ name: 'CDN site', files: [{ path: 'index.html', content: vendoredPage(host.origin) }], vendor: true })
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(res.body.vendored.map((f: { url: string; path: string }) => [f.url.replace(host.origin, ''), f.path]).sort(), [
        ['/css/site.css', `${folder}/css/site.css`],
        ['/fonts/mono.ttf', `${folder}/fonts/mono.ttf`],
        ['/img/logo.png', `${folder}/img/logo.png`],
        ['/lib/app.js', `${folder}/lib/app.js`],
      ])
      assert.equal(res.body.vendored.find((f: { path: string }) => f.path.endsWith('app.js')).bytes, Buffer.byteLength(SCRIPT))
      const page = (await server.site(res.body.slug, '/')).body.toString()
      assert.match(page, new RegExp(`<link rel="stylesheet" href="${folder}/css/site.css">`), 'crossorigin goes with the external origin')
      assert.match(page, new RegExp(`<script src="${folder}/lib/app.js" defer>`))
      assert.doesNotMatch(page, /127\.0\.0\.1:/)
      const script = await server.site(res.body.slug, `/${folder}/lib/app.js`)
      assert.equal(script.body.toString(), SCRIPT)
      assert.match(String(script.headers['content-type']), /^text\/javascript/)
      assert.match((await server.site(res.body.slug, `/${folder}/css/site.css`)).body.toString(), /src: url\("\.\.\/fonts\/mono\.ttf"\)/)
      assert.deepEqual((await server.site(res.body.slug, `/${folder}/fonts/mono.ttf`)).body, FONT)
      assert.deepEqual((await server.site(res.body.slug, `/${folder}/img/logo.png`)).body, PNG)
    })

    test('without vendor the same page is refused as before; with it, a version, a patch and a draft publish all bring files in', async () => {
      const refused = await publish({ files: [{ path: 'index.html', content: vendoredPage(host.origin) }] })
      assertError(refused, 422, 'PUBLISH_INVALID')
      assert.ok(refused.body.error.violations.some((v: { code: string }) => v.code === 'EXTERNAL_URL'))

      const site = await publish({ files: [{ path: 'index.html', content: '<!doctype html><title>Plain</title>' }] })
      assert.equal(site.status, 201, site.text)
      const versions = `/v1/websites/${site.body.websiteId}/versions`
      const whole = await server.api('POST', versions, {
        token: owner.token,
        body: {
          files: [
            { path: 'blog/index.html', content: vendoredPage(host.origin) },
            { path: 'index.html', content: '<!doctype html><title>Home</title>' },
          ],
          vendor: true,
        },
      })
      assert.equal(whole.status, 201, whole.text)
      assert.equal(whole.body.vendored.length, 4)
      assert.match((await server.site(site.body.slug, '/blog/')).body.toString(), new RegExp(`src="\\.\\./${folder}/lib/app\\.js"`))

      const patch = await server.api('POST', versions, {
        token: owner.token,
        body: {
          baseVersion: 2,
          changes: [{ op: 'put', path: 'about.html', content: `<!doctype html><title>About</title><img src="${host.origin}/img/7.png" alt="">` }],
          vendor: true,
        },
      })
      assert.equal(patch.status, 201, patch.text)
      // The base's pages name copies already: only the new page's image is fetched.
      assert.deepEqual(
        patch.body.vendored.map((f: { path: string }) => f.path),
        [`${folder}/img/7.png`],
      )
      assert.match((await server.site(site.body.slug, '/about.html')).body.toString(), new RegExp(`src="${folder}/img/7\\.png"`))

      const draft = await server.api('POST', `/v1/websites/${site.body.websiteId}/drafts`, { token: owner.token, body: {} })
      assert.equal(draft.status, 201, draft.text)
      const write = await server.api('PUT', `/v1/websites/${site.body.websiteId}/drafts/${draft.body.draftId}/files/index.html`, {
        token: owner.token,
        body: { content: `<!doctype html><title>Drafted</title><img src="${host.origin}/img/8.png" alt="">` },
      })
      assert.equal(write.status, 200, write.text)
      const published = await server.api('POST', `/v1/websites/${site.body.websiteId}/drafts/${draft.body.draftId}/publish`, {
        token: owner.token,
        body: { vendor: true },
      })
      assert.equal(published.status, 201, published.text)
      assert.deepEqual(
        published.body.vendored.map((f: { path: string }) => f.path),
        [`${folder}/img/8.png`],
      )
      assert.deepEqual((await server.site(site.body.slug, `/${folder}/img/8.png`)).body, PNG)
    })

    test('the MCP publish tools take vendor too, and report each file brought in', async () => {
      const client = await connect(server, owner.token)
      try {
        const created = (
          await call(client, 'publish_website', {
            category: 'other',
            files: [{ path: 'index.html', content: vendoredPage(host.origin, 'Agent') }],
            vendor: true,
          })
        ).data
        assert.equal(created.vendored.length, 4)
        const next = (
          await call(client, 'publish_version', {
            websiteId: created.websiteId,
            files: [{ path: 'index.html', content: `<!doctype html><title>Two</title><img src="${host.origin}/img/9.png" alt="">` }],
            vendor: true,
          })
        ).data
        assert.deepEqual(next.vendored, [{ url: `${host.origin}/img/9.png`, path: `${folder}/img/9.png`, bytes: PNG.length }])
      } finally {
        await client.close()
      }
    })

    /** Publishes a page naming `src` as a script with vendor, expecting a refusal that stores nothing; its one violation. */
    async function refusedScript(src: string): Promise<{ code: string; path: string; detail: string; message: string }> {
      const before = (await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length
      const res = await publish({ files: [{ path: 'index.html', content: `<!doctype html><title>X</title><script src="${src}"></script>` }], vendor: true })
      assertError(res, 422, 'PUBLISH_INVALID', /could not be brought into the bundle/)
      assert.equal((await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length, before, 'no site was made')
      assert.equal(res.body.error.violations.length, 1, res.text)
      const [violation] = res.body.error.violations
      assert.equal(violation.path, 'index.html')
      assert.equal(violation.detail, src)
      return violation
    }

    test('a private address that is not allowed is refused, and never asked', async () => {
      const port = new URL(host.origin).port
      const before = host.hits.get('/lib/app.js') ?? 0
      const violation = await refusedScript(`http://localhost:${port}/lib/app.js`)
      assert.equal(violation.code, 'VENDOR_FETCH_FAILED')
      assert.match(violation.message, /blocked: localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
      assert.equal(host.hits.get('/lib/app.js') ?? 0, before)
    })

    test('a huge answer is cut at the file limit, and a redirect loop given up', async () => {
      assert.match((await refusedScript(`${host.origin}/huge.js`)).message, /larger than 2097152 bytes \(2 MiB\), the most fetched; stopped reading/)
      assert.match((await refusedScript(`${host.origin}/loop.js`)).message, /redirected more than 5 times; gave up/)
    })

    test('more external files than the bundle may hold: each one that does not fit is named, and none is fetched', async () => {
      const hitsBefore = [...host.hits.values()].reduce((a, b) => a + b, 0)
      const images = Array.from({ length: 45 }, (_, i) => `<img src="${host.origin}/img/${100 + i}.png" alt="">`).join('')
      const res = await publish({ files: [{ path: 'index.html', content: `<!doctype html><title>Many</title>${images}` }], vendor: true })
      assertError(res, 422, 'PUBLISH_INVALID')
      const violations = res.body.error.violations
      assert.deepEqual(new Set(violations.map((v: { code: string }) => v.code)), new Set(['VENDOR_TOO_MANY_FILES']))
      assert.equal(violations[0].detail, `${host.origin}/img/139.png`)
      assert.match(violations[0].message, /the bundle holds 1 files and may hold 40, so only 39 external files fit/)
      assert.equal(violations.length, 6)
      assert.equal(
        [...host.hits.values()].reduce((a, b) => a + b, 0),
        hitsBefore,
      )
    })
  })
}
