/**
 * Rule files written for Netlify and Cloudflare Pages, published as they are and served over
 * HTTP as those hosts serve them: forced rules before the folder redirect, `_headers` values
 * filled from the path, and the headers that can only tighten a site's protection.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SITE_CONTENT_SECURITY_POLICY } from '../../src/core/site-policy.ts'
import { startTestServer, type SiteResponse, type TestServer } from '../helpers/server.ts'

const page = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`

/** Every value of a header as sent, each line apart. */
const sent = (res: SiteResponse, name: string): string[] =>
  res.rawHeaders.flatMap((value, i) => (i % 2 === 1 && res.rawHeaders[i - 1]!.toLowerCase() === name.toLowerCase() ? [value] : []))

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

  describe("Cloudflare's placeholders and splats in _headers values", () => {
    before(async () => {
      const res = await publish('cf-headers', [
        { path: 'index.html', content: page('Home') },
        { path: 'movies/casablanca.html', content: page('Casablanca') },
        { path: 'static/image.jpg', content: 'not really a jpeg' },
        { path: 'static/img/logo.png', content: 'not really a png' },
        {
          path: '_headers',
          content: ['/movies/:title', '  x-movie-name: You are watching ":title"', '/static/*', '  X-Robots-Tag: nosnippet', '  x-splat: :splat', ''].join(
            '\n',
          ),
        },
      ])
      assert.equal(res.status, 201, res.text)
    })

    test('a placeholder is filled with the segment the path matched', async () => {
      const res = await server.site('cf-headers', '/movies/casablanca')
      assert.equal(res.status, 200)
      assert.equal(res.headers['x-movie-name'], 'You are watching "casablanca"')
      const missing = await server.site('cf-headers', '/movies/metropolis')
      assert.equal(missing.status, 404)
      assert.equal(missing.headers['x-movie-name'], 'You are watching "metropolis"', '404 answers get the headers of the path asked for')
    })

    test(':splat is filled with what "*" matched, nested folders included', async () => {
      const image = await server.site('cf-headers', '/static/image.jpg')
      assert.equal(image.headers['x-robots-tag'], 'nosnippet')
      assert.equal(image.headers['x-splat'], 'image.jpg')
      const logo = await server.site('cf-headers', '/static/img/logo.png')
      assert.equal(logo.headers['x-splat'], 'img/logo.png')
      const revalidated = await server.site('cf-headers', '/static/img/logo.png', { headers: { 'if-none-match': String(logo.headers.etag) } })
      assert.equal(revalidated.status, 304)
      assert.equal(revalidated.headers['x-splat'], 'img/logo.png')
    })

    test('what a visitor writes in the path reaches the header %-encoded, never as raw text or a new header', async () => {
      const res = await server.site('cf-headers', '/movies/a%0D%0ASet-Cookie:%20x=1%20%22caf%C3%A9%22')
      assert.equal(res.status, 404)
      assert.equal(res.headers['x-movie-name'], 'You are watching "a%0D%0ASet-Cookie:%20x=1%20%22caf%C3%A9%22"')
      assert.equal(res.headers['set-cookie'], undefined)
    })
  })

  describe('headers that can only tighten protection', () => {
    const HEADERS = [
      '/*',
      "  Content-Security-Policy: default-src 'self'; img-src 'self'; frame-ancestors 'none'",
      '  X-Frame-Options: DENY',
      '  Cross-Origin-Opener-Policy: same-origin',
      '  Cross-Origin-Embedder-Policy: require-corp',
      '  Cross-Origin-Resource-Policy: same-origin',
      '',
    ].join('\n')
    const PROTECTIVE = {
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
      'cross-origin-resource-policy': 'same-origin',
    }

    before(async () => {
      const res = await publish('tight-headers', [
        { path: 'index.html', content: page('Home') },
        { path: 'about/index.html', content: page('About') },
        { path: '_headers', content: HEADERS },
      ])
      assert.equal(res.status, 201, res.text)
    })

    test("are served, and the site's policy is a second Content-Security-Policy beside Plinth's", async () => {
      for (const path of ['/', '/about/', '/no-such-page']) {
        const res = await server.site('tight-headers', path)
        assert.equal(res.status, path === '/no-such-page' ? 404 : 200, path)
        assert.deepEqual(
          sent(res, 'Content-Security-Policy'),
          [SITE_CONTENT_SECURITY_POLICY, "default-src 'self'; img-src 'self'; frame-ancestors 'none'"],
          `${path}: Plinth's policy first and whole, the site's as a policy of its own`,
        )
        for (const [name, value] of Object.entries(PROTECTIVE)) assert.equal(res.headers[name], value, `${path}: ${name}`)
        assert.equal(res.headers['x-content-type-options'], 'nosniff')
      }
    })

    test('a redirect keeps Plinth’s headers alone', async () => {
      const res = await server.site('tight-headers', '/about')
      assert.equal(res.status, 301)
      assert.deepEqual(sent(res, 'Content-Security-Policy'), [SITE_CONTENT_SECURITY_POLICY])
    })

    test('a detach removes the site’s own policy, never Plinth’s', async () => {
      const res = await publish('detached-policy', [
        { path: 'index.html', content: page('Home') },
        { path: '_headers', content: `${HEADERS}/\n  ! Content-Security-Policy\n` },
      ])
      assert.equal(res.status, 201, res.text)
      const home = await server.site('detached-policy', '/')
      assert.deepEqual(sent(home, 'Content-Security-Policy'), [SITE_CONTENT_SECURITY_POLICY])
      assert.equal(home.headers['x-frame-options'], 'DENY')
    })
  })

  test('a header that stays refused refuses the whole bundle with PUBLISH_INVALID, saying why and what to do instead', async () => {
    const cases: Array<[string, RegExp]> = [
      ['X-Content-Type-Options: nosniff', /Plinth already sends "nosniff" on every response.*: remove the line/],
      ['Content-Security-Policy-Report-Only: default-src *', /report-only policy is not supported: try a policy on a preview version/],
      ['X-Frame-Options: ALLOW-FROM https://a.example', /ALLOW-FROM is obsolete.*frame-ancestors/],
      ['Set-Cookie: session=1', /may not set cookies.*localStorage/],
      ['Access-Control-Allow-Origin: https://:splat', /names a placeholder: .*whoever writes the address would choose it/],
    ]
    for (const [line, reason] of cases) {
      const res = await publish('refused-headers', [
        { path: 'index.html', content: page('Home') },
        { path: '_headers', content: `/*\n  X-Fine: yes\n  ${line}\n` },
      ])
      assert.equal(res.status, 422, line)
      assert.equal(res.body.error.code, 'PUBLISH_INVALID', line)
      const violations: Array<{ code: string; path: string; detail: string; message: string }> = res.body.error.violations
      assert.equal(violations.length, 1, JSON.stringify(violations))
      assert.equal(violations[0]!.code, 'INVALID_HEADERS')
      assert.equal(violations[0]!.path, '_headers')
      assert.match(violations[0]!.detail, /^line 3: /)
      assert.match(violations[0]!.message, reason)
    }
    assert.equal((await server.site('refused-headers', '/')).status, 404, 'nothing was published')
  })
})
