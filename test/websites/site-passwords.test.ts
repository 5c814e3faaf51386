/**
 * Site passwords: set and removed over REST, MCP and the dashboard; a protected site answers every
 * host and path with its password page until the right password is posted to /.plinth/unlock.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FIELDS } from '../helpers/content.ts'
import { call, CLIENTS, connect } from '../helpers/mcp.ts'
import { bundle, SITE_DOMAIN, sharedTestServers, startTestServer, type TestServer } from '../helpers/server.ts'
import { cookieOf, unlockSite } from '../helpers/site-unlock.ts'
import { STORES } from '../helpers/stores.ts'
import { WebVisitor } from '../helpers/web.ts'

const SECRET_TEXT = 'Only for members'

// A server per store and settings, shared by the suites of this file.
const sharedServer = sharedTestServers()

for (const store of STORES) {
  describe(`site passwords (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: Awaited<ReturnType<TestServer['user']>>
    let websiteId: string
    let entryPath: string
    before(async () => {
      server = await sharedServer(store.name)
      owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { slug: 'members', category: 'other', files: bundle(SECRET_TEXT) } })
      assert.equal(created.status, 201, created.text)
      websiteId = created.body.websiteId
      const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, {
        token: owner.token,
        body: { name: 'posts', label: 'Posts', fields: FIELDS },
      })
      assert.equal(collection.status, 201, collection.text)
      const entry = await server.api('PUT', `/v1/websites/${websiteId}/collections/posts/entries/hidden`, {
        token: owner.token,
        body: { data: { title: 'Hidden entry' } },
      })
      assert.ok(entry.status === 201 || entry.status === 200, entry.text)
      entryPath = entry.body.path
      const v2 = await server.api('POST', `/v1/websites/${websiteId}/versions`, {
        token: owner.token,
        body: { files: bundle(`${SECRET_TEXT} v2`), promote: false },
      })
      assert.equal(v2.status, 201, v2.text)
    })

    const setPassword = (password: string, token = owner.token, id = websiteId) =>
      server.api('PUT', `/v1/websites/${id}/password`, { token, body: { password } })

    test('PUT sets it (owner or editor), the website says so, and bad input changes nothing', async () => {
      for (const password of ['short', 'x'.repeat(201)]) {
        const res = await setPassword(password)
        assert.equal(res.status, 422, res.text)
        assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      }
      assert.equal(
        (await server.api('PUT', `/v1/websites/${websiteId}/password`, { token: owner.token, body: { password: 'long enough', extra: 1 } })).status,
        422,
      )
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: owner.token })).body.passwordProtected, false)
      const stranger = await server.user()
      assert.equal((await setPassword('a stranger tries', stranger.token)).status, 404)
      assert.equal((await server.site('members', '/')).status, 200, 'still open after the refusals')
      // Served, and so cached, before the password: the next test finds them locked all the same.
      for (const label of ['members--v1', 'members--v2']) assert.equal((await server.site(label, '/')).status, 200, label)

      assert.equal((await setPassword('correct horse')).status, 204)
      const site = await server.api('GET', `/v1/websites/${websiteId}`, { token: owner.token })
      assert.equal(site.body.passwordProtected, true)
      const list = await server.api('GET', '/v1/websites', { token: owner.token })
      assert.equal(list.body.items.find((s: { id: string }) => s.id === websiteId).passwordProtected, true)
    })

    test('every host and path of a protected site answers the password page: no site bytes, no entry, no feed', async () => {
      for (const [label, path] of [
        ['members', '/'],
        ['members', '/style.css'],
        ['members', entryPath],
        ['members', '/posts'],
        ['members', '/posts.json'],
        ['members', '/posts.xml'],
        ['members', '/sitemap.xml'],
        ['members', '/missing-page'],
        ['members--v2', '/'],
        ['members--v1', '/'],
      ]) {
        const res = await server.site(label!, path)
        const text = res.body.toString()
        assert.equal(res.status, 401, `${label}${path}`)
        assert.match(String(res.headers['content-type']), /^text\/html/)
        assert.equal(res.headers['cache-control'], 'no-store')
        assert.ok(!text.includes(SECRET_TEXT) && !text.includes('Hidden entry'), `${label}${path}: nothing of the site`)
        assert.match(text, /<form method="post" action="\/\.plinth\/unlock">/)
        assert.match(text, /<label for="password">Password<\/label>/)
        assert.match(text, /type="password"/)
      }
      const head = await server.site('members', '/', { method: 'HEAD' })
      assert.equal(head.status, 401)
      assert.equal(head.body.length, 0)
    })

    test('the right password sets a host-only, HttpOnly cookie and leads back; a wrong one or a cross-site form does not', async () => {
      const wrong = await unlockSite(server, 'members', 'not the password', { next: '/style.css' })
      assert.equal(wrong.status, 401)
      assert.match(wrong.body, /not right/)
      assert.equal(wrong.headers['set-cookie'], undefined)

      const crossSite = await unlockSite(server, 'members', 'correct horse', { origin: 'https://evil.example' })
      assert.equal(crossSite.status, 403)
      assert.equal(crossSite.headers['set-cookie'], undefined)

      const right = await unlockSite(server, 'members', 'correct horse', { next: '/style.css', origin: `http://members.${SITE_DOMAIN}` })
      assert.equal(right.status, 303)
      assert.equal(right.headers.location, '/style.css')
      const setCookie = String(right.headers['set-cookie']?.[0])
      assert.match(setCookie, /^plinth_unlock=\d+\.[A-Za-z0-9_-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/)
      assert.doesNotMatch(setCookie, /Domain=/i, 'scoped to this host alone')
      const cookie = cookieOf(right)

      const page = await server.site('members', '/', { headers: { cookie } })
      assert.equal(page.status, 200)
      assert.match(page.body.toString(), new RegExp(SECRET_TEXT))
      const entry = await server.site('members', entryPath, { headers: { cookie } })
      assert.equal(entry.status, 200)
      assert.match(entry.body.toString(), /Hidden entry/)

      const offSite = await unlockSite(server, 'members', 'correct horse', { next: '//evil.example/x' })
      assert.equal(offSite.headers.location, '/', 'never sends the visitor elsewhere')
      const oversized = await unlockSite(server, 'members', 'x'.repeat(8 * 1024))
      assert.equal(oversized.status, 413, 'an oversized password form is told so, not cut off')
      assert.equal(oversized.headers.connection, 'close')
      const accented = await unlockSite(server, 'members', 'correct horse', { next: '/café ✓.html' })
      assert.equal(accented.status, 303, accented.body)
      assert.equal(accented.headers.location, '/caf%C3%A9%20%E2%9C%93.html', 'a path outside ASCII goes on percent-encoded')
      assert.equal((await server.site('members', '/', { headers: { cookie: `${cookie}x` } })).status, 401, 'a forged cookie opens nothing')
    })

    test('a new password ends earlier unlocks; removing it opens the site again', async () => {
      const cookie = cookieOf(await unlockSite(server, 'members', 'correct horse'))
      assert.equal((await server.site('members', '/', { headers: { cookie } })).status, 200)
      assert.equal((await setPassword('battery staple')).status, 204)
      assert.equal((await server.site('members', '/', { headers: { cookie } })).status, 401)
      assert.equal((await server.api('DELETE', `/v1/websites/${websiteId}/password`, { token: owner.token })).status, 204)
      const open = await server.site('members', '/')
      assert.equal(open.status, 200)
      assert.match(open.body.toString(), new RegExp(SECRET_TEXT))
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: owner.token })).body.passwordProtected, false)
      assert.equal((await server.api('DELETE', `/v1/websites/${websiteId}/password`, { token: owner.token })).status, 204, 'removing twice is fine')
    })

    test("a protected site's pages are private to the browser, whatever its _headers say; open again, they are public", async () => {
      const other = await server.user()
      const files = [
        ...bundle('Members only'),
        { path: 'plain.html', content: '<!doctype html><title>Plain</title><p>Plain</p>' },
        { path: '_headers', content: '/index.html\n  Cache-Control: public, max-age=31536000, immutable\n' },
      ]
      const created = await server.api('POST', '/v1/websites', { token: other.token, body: { category: 'other', files } })
      assert.equal(created.status, 201, created.text)
      const { slug, websiteId: id } = created.body
      assert.equal((await server.site(slug, '/index.html')).headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.equal((await setPassword('correct horse', other.token, id)).status, 204)
      const cookie = cookieOf(await unlockSite(server, slug, 'correct horse'))
      for (const path of ['/index.html', '/plain.html', '/style.css']) {
        const res = await server.site(slug, path, { headers: { cookie } })
        assert.equal(res.status, 200, path)
        assert.equal(res.headers['cache-control'], 'private, no-cache', path)
      }
      assert.equal((await server.api('DELETE', `/v1/websites/${id}/password`, { token: other.token })).status, 204)
      assert.equal((await server.site(slug, '/index.html')).headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.match((await server.site(slug, '/plain.html')).headers['cache-control'] ?? '', /^public/)
    })

    test('a password set on the dashboard is kept exactly as typed, spaces included, as REST and MCP keep it', async () => {
      const web = new WebVisitor(server)
      assert.equal((await web.signIn(owner.email)).status, 303)
      const page = `/dashboard/sites/${websiteId}`
      const set = await web.submit(page, `${page}/password`, { password: '  spaced out  ' })
      assert.equal(set.status, 303, set.text.slice(0, 300))
      assert.equal((await unlockSite(server, 'members', 'spaced out')).status, 401, 'the trimmed text is not the password')
      assert.equal((await unlockSite(server, 'members', '  spaced out  ')).status, 303)
      assert.equal((await server.api('DELETE', `/v1/websites/${websiteId}/password`, { token: owner.token })).status, 204)
    })

    test('wrong guesses are throttled per site and client address, the right password included', async () => {
      const user = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'guarded', category: 'other', files: bundle('Guarded') } })
      assert.equal((await setPassword('the real one', user.token, created.body.websiteId)).status, 204)
      for (let i = 0; i < 10; i++) assert.equal((await unlockSite(server, 'guarded', `guess ${i}`)).status, 401)
      const blocked = await unlockSite(server, 'guarded', 'the real one')
      assert.equal(blocked.status, 429)
      assert.ok(Number(blocked.headers['retry-after']) > 0)
      assert.match(blocked.body, /Too many wrong passwords/)
      assert.equal(blocked.headers['set-cookie'], undefined)
    })

    test('set_site_password over MCP, with both SDKs', async () => {
      for (const kind of CLIENTS) {
        const client = await connect(server, owner.token, { client: kind })
        try {
          const set = await call(client, 'set_site_password', { websiteId, password: 'mcp password' })
          assert.deepEqual(set.data, { passwordProtected: true })
          assert.equal((await server.site('members', '/')).status, 401)
          const short = await call(client, 'set_site_password', { websiteId, password: 'short' })
          assert.equal(short.isError, true)
          assert.equal(short.data.error.code, 'VALIDATION_FAILED')
          const removed = await call(client, 'set_site_password', { websiteId, password: null })
          assert.deepEqual(removed.data, { passwordProtected: false })
          assert.equal((await server.site('members', '/')).status, 200)
        } finally {
          await client.close()
        }
      }
    })
  })
}

describe('site passwords on https sites', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { PLINTH_SITE_URL: 'https://plinth.test:8080' })
  })
  after(() => server?.close())

  test('the unlock cookie is __Host- prefixed and Secure', async () => {
    const user = await server.user()
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'secure-site', category: 'other', files: bundle('Secure') } })
    assert.equal(
      (await server.api('PUT', `/v1/websites/${created.body.websiteId}/password`, { token: user.token, body: { password: 'over https' } })).status,
      204,
    )
    const res = await unlockSite(server, 'secure-site', 'over https')
    assert.equal(res.status, 303)
    assert.match(String(res.headers['set-cookie']?.[0]), /^__Host-plinth_unlock=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/)
  })
})

describe('site password guesses behind a proxy', () => {
  for (const [trust, separate] of [
    ['127.0.0.1', true],
    ['', false],
  ] as const) {
    test(`with PLINTH_TRUST_PROXY=${JSON.stringify(trust)} clients behind one proxy are throttled ${separate ? 'each on their own' : 'together (X-Forwarded-For is not believed)'}`, async () => {
      // An empty PLINTH_TRUST_PROXY is the default: that server is the one the suites above share.
      const server = await sharedServer('sqlite', trust ? { PLINTH_TRUST_PROXY: trust } : {})
      const user = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'proxied', category: 'other', files: bundle('Proxied') } })
      assert.equal(
        (await server.api('PUT', `/v1/websites/${created.body.websiteId}/password`, { token: user.token, body: { password: 'the real one' } })).status,
        204,
      )
      for (let i = 0; i < 10; i++) assert.equal((await unlockSite(server, 'proxied', `guess ${i}`, { forwardedFor: '203.0.113.5' })).status, 401)
      assert.equal((await unlockSite(server, 'proxied', 'the real one', { forwardedFor: '203.0.113.5' })).status, 429)
      assert.equal((await unlockSite(server, 'proxied', 'the real one', { forwardedFor: '203.0.113.6' })).status, separate ? 303 : 429)
    })
  }

  test('an IPv6 client is throttled by its /64, whichever of its addresses it guesses from', async () => {
    const server = await sharedServer('sqlite', { PLINTH_TRUST_PROXY: '127.0.0.1' })
    const user = await server.user()
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'rotated', category: 'other', files: bundle('Rotated') } })
    assert.equal(
      (await server.api('PUT', `/v1/websites/${created.body.websiteId}/password`, { token: user.token, body: { password: 'the real one' } })).status,
      204,
    )
    for (let i = 0; i < 10; i++)
      assert.equal((await unlockSite(server, 'rotated', `guess ${i}`, { forwardedFor: `2001:db8:5:7::${(i + 1).toString(16)}` })).status, 401)
    assert.equal((await unlockSite(server, 'rotated', 'the real one', { forwardedFor: '2001:db8:5:7:ffff:1:2:3' })).status, 429)
    assert.equal((await unlockSite(server, 'rotated', 'the real one', { forwardedFor: '2001:db8:5:8::1' })).status, 303, 'the next /64 is another client')
  })
})
