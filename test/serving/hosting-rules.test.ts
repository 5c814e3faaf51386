/**
 * `_redirects` and `_headers` end to end: published in a bundle, checked at publish, applied by the
 * site server to files, entry pages and 404 answers, never served themselves.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createSite, createUser } from '../helpers/factories.ts'
import { FIELDS } from '../helpers/content.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

const page = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`

const REDIRECTS = `# Moved pages and a single-page app
/old-about        /about.html
/blog/*           /news/:splat         302
/posts/:year/:slug /archive/:year/:slug 308
/go               https://example.org/landing 307
/search           /find?q=plinth       303
/private/*        /not-here.html       404
/docs/*           /docs/index.html     200
/panel/*          /console             200
/about.html       /elsewhere.html      301
/forced.html      /about.html          301!
/posts/*          /shadowed.html       301
/*                /index.html          200
`

const HEADERS = `/assets/*
  Cache-Control: public, max-age=31536000, immutable
/api/*
  Access-Control-Allow-Origin: *
  X-Api: yes
/*
  X-Robots-Tag: noarchive
  Link: </style.css>; rel=preload; as=style
`

const files = [
  { path: 'index.html', content: page('Home') },
  { path: 'about.html', content: page('About') },
  { path: 'forced.html', content: page('Forced away') },
  { path: 'not-here.html', content: page('Not here') },
  { path: 'docs/index.html', content: page('Docs') },
  { path: 'console/index.html', content: page('Console') },
  { path: 'assets/app.css', content: 'body { color: #123; }' },
  { path: 'api/data.json', content: '{"ok":true}' },
  { path: '_redirects', content: REDIRECTS },
  { path: '_headers', content: HEADERS },
]

describe('_redirects and _headers', () => {
  let server: TestServer
  let token: string
  let websiteId: string
  before(async () => {
    server = await startTestServer('sqlite')
    ;({ token } = await createUser(server))
    ;({ websiteId } = await createSite(server, { owner: { token }, slug: 'rules-site', files }))
  })
  after(() => server?.close())

  const get = (path: string, headers: Record<string, string> = {}) => server.site('rules-site', path, { headers })

  test('redirects answer with their status and target; splats, placeholders and the query string carry over', async () => {
    const cases: Array<[string, number, string]> = [
      ['/old-about', 301, '/about.html'],
      ['/blog/2024/hello', 302, '/news/2024/hello'],
      ['/blog/a?ref=x', 302, '/news/a?ref=x'],
      ['/posts/2023/first', 308, '/archive/2023/first'],
      ['/go', 307, 'https://example.org/landing'],
      ['/search?q=old', 303, '/find?q=plinth'],
    ]
    for (const [path, status, location] of cases) {
      const res = await get(path)
      assert.equal(res.status, status, path)
      assert.equal(res.headers.location, location, path)
      assert.match(String(res.headers['content-security-policy']), /default-src/, `${path}: the site CSP is sent on redirects too`)
    }
  })

  test('a file that exists is served before a rule applies, unless the rule is forced', async () => {
    const about = await get('/about.html')
    assert.equal(about.status, 200)
    assert.match(about.body.toString(), /About/)
    const forced = await get('/forced.html')
    assert.equal(forced.status, 301)
    assert.equal(forced.headers.location, '/about.html')
  })

  test('rewrites serve another path of the version with 200, or 404 for a 404 rule; the single-page app rule catches the rest', async () => {
    const docs = await get('/docs/getting/started')
    assert.equal(docs.status, 200)
    assert.match(docs.body.toString(), /Docs/)
    const hidden = await get('/private/secret')
    assert.equal(hidden.status, 404)
    assert.match(hidden.body.toString(), /Not here/)
    // A rewrite to a folder serves its index.html (a request for it would be sent on to `/console/`).
    const panel = await get('/panel/users')
    assert.equal(panel.status, 200)
    assert.match(panel.body.toString(), /Console/)
    const app = await get('/app/some/client/route?tab=2')
    assert.equal(app.status, 200)
    assert.match(app.body.toString(), /Home/)
  })

  test('_redirects and _headers configure serving and are not served themselves', async () => {
    for (const path of ['/_redirects', '/_headers']) {
      const res = await get(path)
      // The single-page app rule answers instead: never the file's text.
      assert.ok(!res.body.toString().includes('Cache-Control: public') && !res.body.toString().includes('/old-about'), path)
    }
  })

  test('headers apply to files, rewrites and 404 answers by request path, and Cache-Control replaces the default', async () => {
    const css = await get('/assets/app.css')
    assert.equal(css.headers['cache-control'], 'public, max-age=31536000, immutable')
    assert.equal(css.headers['x-robots-tag'], 'noarchive')
    assert.equal(css.headers.link, '</style.css>; rel=preload; as=style')
    const api = await get('/api/data.json')
    assert.equal(api.headers['access-control-allow-origin'], '*')
    assert.equal(api.headers['x-api'], 'yes')
    assert.equal(api.headers['cache-control'], 'public, max-age=0, must-revalidate', 'no rule sets it here: the default stays')
    const rewritten = await get('/app/route')
    assert.equal(rewritten.headers['x-robots-tag'], 'noarchive')
    const missing = await get('/private/x')
    assert.equal(missing.status, 404)
    assert.equal(missing.headers['x-robots-tag'], 'noarchive')
    const conditional = await get('/assets/app.css', { 'if-none-match': String(css.headers.etag) })
    assert.equal(conditional.status, 304)
    assert.equal(conditional.headers['cache-control'], 'public, max-age=31536000, immutable')
    for (const res of [css, api, rewritten, missing]) {
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/, 'the CSP is always Plinth’s')
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
    }
  })

  test('a preview keeps its noindex whatever _headers says', async () => {
    const v2 = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token, body: { files, promote: false } })
    assert.equal(v2.status, 201, v2.text)
    const preview = await server.site('rules-site--v2', '/assets/app.css')
    assert.equal(preview.status, 200)
    assert.equal(preview.headers['x-robots-tag'], 'noindex')
    assert.equal(preview.headers['cache-control'], 'public, max-age=31536000, immutable')
  })

  test('entry pages keep precedence over rules that would shadow them', async () => {
    const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, { token, body: { name: 'posts', label: 'Posts', fields: FIELDS } })
    assert.equal(collection.status, 201, collection.text)
    const entry = await server.api('PUT', `/v1/websites/${websiteId}/collections/posts/entries/hello`, { token, body: { data: { title: 'Hello entry' } } })
    assert.ok(entry.status === 200 || entry.status === 201, entry.text)
    // `/* /index.html 200` would answer every path: the entry page and the listing come first.
    const res = await get(entry.body.path)
    assert.equal(res.status, 200)
    assert.match(res.body.toString(), /Hello entry/)
    assert.equal(res.headers['x-robots-tag'], 'noarchive', '_headers applies to entry pages')
    const listing = await get('/posts')
    assert.equal(listing.status, 200)
    assert.match(listing.body.toString(), /Hello entry/)
    const slash = await get('/posts/')
    assert.equal(slash.headers.location, '/posts', 'the listing’s own redirect, not a rule’s')
    // A path of no entry falls through to the rules.
    const gone = await get('/posts/no-such-entry')
    assert.equal(gone.status, 301)
    assert.equal(gone.headers.location, '/shadowed.html')
    const spa = await get('/posts-nothing')
    assert.equal(spa.status, 200)
    assert.match(spa.body.toString(), /Home/)
  })

  test('rule files saved as UTF-16 with a byte-order mark are served as publishing read them', async () => {
    const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]).toString('base64')
    const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]).toString('base64')
    const created = await server.api('POST', '/v1/websites', {
      token,
      body: {
        slug: 'wide-rules',
        category: 'other',
        files: [
          { path: 'index.html', content: page('Wide') },
          { path: 'about.html', content: page('About') },
          { path: '_redirects', content: utf16le('/moved /about.html 301\n'), contentEncoding: 'base64' },
          { path: '_headers', content: utf16be('/*\n  X-Wide: yes\n'), contentEncoding: 'base64' },
        ],
      },
    })
    assert.equal(created.status, 201, created.text)
    const moved = await server.site('wide-rules', '/moved')
    assert.equal(moved.status, 301)
    assert.equal(moved.headers.location, '/about.html')
    assert.equal((await server.site('wide-rules', '/')).headers['x-wide'], 'yes')
  })

  test('broken rules and refused headers are refused at publish with the file and line', async () => {
    const bad = [
      { path: 'index.html', content: page('Bad') },
      { path: '_redirects', content: '/ok /fine 301\n/bad\n/x /y 418\n/spa https://evil.example/ 200\n' },
      { path: '_headers', content: '/*\n  X-Content-Type-Options: none\n  ! X-XSS-Protection\n  Set-Cookie: a=b\n  X-Fine: yes\n' },
    ]
    const res = await server.api('POST', '/v1/websites', { token, body: { category: 'other', files: bad } })
    assert.equal(res.status, 422, res.text)
    const violations: Array<{ code: string; path: string; detail: string; message: string }> = res.body.error.violations
    const at = (code: string) => violations.filter((v) => v.code === code).map((v) => v.detail.match(/^line (\d+)/)?.[1])
    assert.deepEqual(at('INVALID_REDIRECTS'), ['2', '3', '4'])
    assert.deepEqual(at('INVALID_HEADERS'), ['2', '3', '4'])
    for (const v of violations) {
      assert.ok(v.path === '_redirects' || v.path === '_headers')
      assert.match(v.message, /line \d+/)
      assert.deepEqual(Object.keys(v).sort(), ['code', 'detail', 'message', 'path'], 'a violation has the interface fields only')
    }
  })
})
