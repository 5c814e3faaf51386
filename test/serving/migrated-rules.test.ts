/**
 * Rule files written for Netlify and Cloudflare Pages, published as they are and served over
 * HTTP as those hosts serve them: forced rules before the folder redirect.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SITE_CONTENT_SECURITY_POLICY } from '../../src/serving/security-headers.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

const page = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`

describe('rule files from Netlify and Cloudflare Pages', () => {
  let server: TestServer
  let token: string
  const publish = (slug: string, files: Array<{ path: string; content: string }>) =>
    server.api('POST', '/v1/websites', { token, body: { slug, category: 'other', files } })

  before(async () => {
    server = await startTestServer('sqlite')
    ;({ token } = await server.user())
  })
  after(() => server?.close())

  describe('a forced rule answers before the folder redirect', () => {
    before(async () => {
      const folders = [
        { path: 'index.html', content: page('Home') },
        { path: 'docs/index.html', content: page('Docs') },
        { path: 'app/index.html', content: page('App folder') },
        { path: 'guide/index.html', content: page('Guide') },
        { path: 'shell.html', content: page('Shell') },
      ]
      const forced = await publish('forced-rules', [
        ...folders,
        { path: '_redirects', content: '/docs  /manual  302!\n/app   /shell   200!\n/*     https://new.example/:splat  301!\n' },
      ])
      assert.equal(forced.status, 201, forced.text)
      const plain = await publish('plain-rules', [...folders, { path: '_redirects', content: '/docs  /manual  302\n' }])
      assert.equal(plain.status, 201, plain.text)
    })

    test('/docs /manual 302! answers GET /docs with its own 302, not a 301 to /docs/', async () => {
      const res = await server.site('forced-rules', '/docs')
      assert.equal(res.status, 302)
      assert.equal(res.headers.location, '/manual')
      assert.equal(res.headers['cache-control'], 'public, max-age=0, must-revalidate')
      const query = await server.site('forced-rules', '/docs?page=2')
      assert.equal(query.headers.location, '/manual?page=2', 'the query string carries over')
    })

    test('/* https://new.example/:splat 301! moves a folder in one hop', async () => {
      const res = await server.site('forced-rules', '/guide')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, 'https://new.example/guide')
      const slash = await server.site('forced-rules', '/guide/')
      assert.equal(slash.headers.location, 'https://new.example/guide')
      const home = await server.site('forced-rules', '/')
      assert.equal(home.headers.location, 'https://new.example/')
    })

    test('/app /shell 200! serves the shell at /app, and at /app/', async () => {
      for (const path of ['/app', '/app/']) {
        const res = await server.site('forced-rules', path)
        assert.equal(res.status, 200, path)
        assert.match(res.body.toString(), /Shell/, path)
        assert.equal(res.headers['content-security-policy'], SITE_CONTENT_SECURITY_POLICY, path)
      }
    })

    test('a rule that is not forced still leaves the folder to its redirect and its index.html', async () => {
      const res = await server.site('plain-rules', '/docs')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/docs/')
      const index = await server.site('plain-rules', '/docs/')
      assert.equal(index.status, 200)
      assert.match(index.body.toString(), /Docs/)
    })
  })
})
