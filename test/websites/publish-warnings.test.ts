/**
 * What the rules accept works in the browser: the served Content-Security-Policy allows what the
 * authoring rules let a page reference, and a publish reports, as warnings naming each file, what
 * browsers will still block on the site.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const HEAD = '<!doctype html><html lang="en"><meta name="viewport" content="width=device-width"><title>t</title>'
const files = [
  {
    path: 'index.html',
    content: `${HEAD}<img src="http://img.example/a.png" alt=""><link rel=stylesheet href=site.css><script type="module" src="app.js"></script>`,
  },
  { path: 'site.css', content: "@font-face { font-family: F; src: url('https://fonts.example/f.woff2') }" },
  { path: 'app.js', content: 'export const run = (code) => eval(code)' },
]

for (const store of STORES) {
  describe(`publish warnings and the served policy (${store.name})`, { skip: store.skip }, () => {
    let https: TestServer
    let plain: TestServer
    before(async () => {
      https = await startTestServer(store.name, { PLINTH_SITE_URL: 'https://plinth.test:8080' })
      plain = await startTestServer(store.name)
    })
    after(async () => {
      await https?.close()
      await plain?.close()
    })

    test('on an https instance createWebsite and createWebsiteVersion warn of mixed content and eval, file by file', async () => {
      const user = await https.user()
      const created = await https.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual(
        created.body.warnings.map((w: { code: string; path: string }) => [w.code, w.path]),
        [
          ['MIXED_CONTENT', 'index.html'],
          ['BLOCKED_BY_POLICY', 'app.js'],
        ],
      )
      const version = await https.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: user.token, body: { files } })
      assert.equal(version.status, 201, version.text)
      assert.deepEqual(
        version.body.warnings.map((w: { code: string }) => w.code),
        ['MIXED_CONTENT', 'BLOCKED_BY_POLICY'],
      )
    })

    test('on an http instance plain-http images are no warning; a clean bundle has none', async () => {
      const user = await plain.user()
      const created = await plain.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.deepEqual(
        created.body.warnings.map((w: { code: string }) => w.code),
        ['BLOCKED_BY_POLICY'],
      )
      const clean = await plain.api('POST', '/v1/websites', {
        token: user.token,
        body: { category: 'other', files: [files[0]!, files[1]!, { path: 'app.js', content: 'export const run = (f) => f()' }] },
      })
      assert.deepEqual(clean.body.warnings, [], 'nothing to warn of: an empty list')
    })

    test('a form sent to another origin is a warning on any instance, since the served policy stops it; one sent to /_forms is not', async () => {
      const user = await plain.user()
      const page = (form: string) => [{ path: 'index.html', content: `${HEAD}${form}<label>A <input name="a"></label></form>` }]
      const off = await plain.api('POST', '/v1/websites', {
        token: user.token,
        body: { category: 'other', files: page('<form method="post" action="https://forms.example/f">') },
      })
      assert.equal(off.status, 201, off.text)
      assert.deepEqual(
        off.body.warnings.map((w: { code: string; path: string }) => [w.code, w.path]),
        [['BLOCKED_BY_POLICY', 'index.html']],
      )
      assert.match(off.body.warnings[0].message, /sends a form to https:\/\/forms\.example\/f .*form-action 'self'/)
      const own = await plain.api('POST', '/v1/websites', {
        token: user.token,
        body: { category: 'other', files: page('<form method="post" action="/_forms/contact">') },
      })
      assert.equal(own.status, 201, own.text)
      assert.deepEqual(own.body.warnings, [])
      assert.deepEqual(
        own.body.forms.map((f: { name: string }) => f.name),
        ['contact'],
      )
    })

    test('the served policy lets pages load what the rules accept from other origins', async () => {
      const user = await plain.user()
      const created = await plain.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      const page = await plain.site(created.body.slug, '/')
      const policy = new Map(
        String(page.headers['content-security-policy'])
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([name, ...sources]) => [name!, new Set(sources)]),
      )
      for (const directive of ['img-src', 'media-src', 'font-src', 'connect-src']) {
        assert.ok(policy.get(directive)?.has('https:') && policy.get(directive)?.has('http:'), `${directive} allows http(s) origins`)
      }
      assert.deepEqual([...policy.get('form-action')!], ["'self'"], 'forms are sent to the site only, where /_forms/{name} takes them')
      assert.deepEqual([...policy.get('script-src')!], ["'self'", "'unsafe-inline'", "'wasm-unsafe-eval'"], 'scripts from the site only, WebAssembly, no eval')
      assert.deepEqual([...policy.get('frame-src')!], ["'none'"])
      assert.deepEqual([...policy.get('worker-src')!], ["'self'", 'blob:'], 'same-site workers')

      // The eval warning is given because the script sources served do not allow 'unsafe-eval', and says which they are.
      const scriptSources = String(page.headers['content-security-policy']).match(/script-src ([^;]*)/)![1]!
      assert.ok(!policy.get('script-src')!.has("'unsafe-eval'"))
      const warning = created.body.warnings.find((w: { code: string }) => w.code === 'BLOCKED_BY_POLICY')
      assert.ok(warning.message.includes(`(script-src ${scriptSources})`), warning.message)
    })
  })
}
