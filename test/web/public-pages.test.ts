/**
 * The public resources of the web site over real HTTP: the landing page and the docs in HTML
 * and markdown (negotiated and at `.md` URLs, with `Vary: Accept`), llms.txt, llms-full.txt,
 * sitemap.xml, robots.txt, the 404 in each representation, and every link the API index and the
 * protected-resource metadata advertise.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { BASE_URL, startTestServer, type TestServer } from '../helpers/server.ts'
import { captured } from '../helpers/web.ts'

const GUIDE_PAGES = readdirSync(new URL('../../docs/guide/', import.meta.url))
  .filter((f) => f.endsWith('.md') && f !== 'index.md')
  .map((f) => f.slice(0, -3))

describe('web site public pages', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(async () => server?.close())

  /** A GET on the test server of a path, or of an absolute URL of this instance. */
  const get = (pathOrUrl: string, accept?: string) =>
    fetch(server.url + (pathOrUrl.startsWith(BASE_URL) ? pathOrUrl.slice(BASE_URL.length) : pathOrUrl), {
      headers: accept ? { accept } : {},
      redirect: 'manual',
    })

  test('the landing page says what Plinth is, with a first publish in curl and an MCP client config', async () => {
    const response = await get('/', 'text/html')
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.match(response.headers.get('vary') ?? '', /Accept/)
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/)
    const html = await response.text()
    assert.match(html, /<h1[^>]*>Plinth<\/h1>/)
    assert.match(html, /curl -X POST http:\/\/api\.plinth\.test:8080\/v1\/websites/, 'the curl names this instance')
    assert.match(html, /claude mcp add --transport http plinth http:\/\/api\.plinth\.test:8080\/mcp/)
    assert.doesNotMatch(html, /localhost:8080/, 'the default addresses are replaced by this instance')
    assert.match(html, /<main id="main"/)
  })

  test('every core page answers Accept: text/markdown with markdown, and is at an explicit .md URL', async () => {
    const pages = ['/', '/docs', ...GUIDE_PAGES.map((p) => `/docs/${p}`)]
    for (const path of pages) {
      const html = await get(path, 'text/html')
      assert.equal(html.status, 200, path)
      assert.match(html.headers.get('content-type') ?? '', /^text\/html/, path)
      assert.match(html.headers.get('vary') ?? '', /Accept/, `${path} varies by Accept`)

      const negotiated = await get(path, 'text/markdown')
      assert.equal(negotiated.status, 200, path)
      assert.equal(negotiated.headers.get('content-type'), 'text/markdown; charset=utf-8', path)
      assert.match(negotiated.headers.get('vary') ?? '', /Accept/, path)
      const markdown = await negotiated.text()
      assert.match(markdown, /^# .+/m, `${path} is markdown with a title`)

      const mdUrl = path === '/' ? '/index.md' : `${path}.md`
      const explicit = await get(mdUrl)
      assert.equal(explicit.status, 200, mdUrl)
      assert.equal(explicit.headers.get('content-type'), 'text/markdown; charset=utf-8', mdUrl)
      assert.equal(await explicit.text(), markdown, `${mdUrl} is the same markdown`)
    }
  })

  test('docs link to each other within each representation', async () => {
    const html = await (await get('/docs', 'text/html')).text()
    for (const page of GUIDE_PAGES) assert.ok(html.includes(`href="/docs/${page}"`), `the docs index links /docs/${page}`)
    const markdown = await (await get('/docs.md')).text()
    for (const page of GUIDE_PAGES) assert.ok(markdown.includes(`(${BASE_URL}/docs/${page}.md`), `the markdown index links ${page}.md absolutely`)
    assert.equal((await get('/docs/no-such-page', 'text/html')).status, 404)
    assert.equal((await get('/docs/no-such-page.md')).status, 404)
  })

  test('llms.txt follows the convention and every link in it resolves', async () => {
    const response = await get('/llms.txt')
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/)
    const text = await response.text()
    const lines = text.split('\n')
    assert.equal(lines[0], '# Plinth', 'an H1 first')
    assert.ok(
      lines.some((l) => l.startsWith('> ')),
      'a summary blockquote',
    )
    assert.ok(lines.filter((l) => l.startsWith('## ')).length >= 2, 'sections of links')
    const links = [...text.matchAll(/\]\((https?:\/\/[^)]+)\)/g)].map((m) => m[1]!)
    assert.ok(links.length >= GUIDE_PAGES.length + 3)
    for (const link of links) {
      const answer = await get(link, link.endsWith('/mcp') ? 'text/html' : undefined)
      assert.equal(answer.status, 200, `${link} resolves`)
    }
  })

  test('llms-full.txt inlines every page of the docs', async () => {
    const text = await (await get('/llms-full.txt')).text()
    for (const page of ['index', ...GUIDE_PAGES]) {
      const md = await (await get(page === 'index' ? '/docs.md' : `/docs/${page}.md`)).text()
      const title = captured(/^# (.+)$/m, md)
      assert.ok(text.includes(`# ${title}`), `llms-full.txt holds ${page}`)
    }
  })

  test('sitemap.xml lists the public pages and robots.txt points at it', async () => {
    const sitemap = await get('/sitemap.xml')
    assert.match(sitemap.headers.get('content-type') ?? '', /^application\/xml/)
    const xml = await sitemap.text()
    assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www\.sitemaps\.org\/schemas\/sitemap\/0\.9">/)
    const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!)
    assert.deepEqual(locs.sort(), [`${BASE_URL}/`, `${BASE_URL}/docs`, ...GUIDE_PAGES.map((p) => `${BASE_URL}/docs/${p}`)].sort())
    for (const loc of locs) assert.equal((await get(loc, 'text/html')).status, 200, loc)

    const robots = await (await get('/robots.txt')).text()
    assert.match(robots, /^User-agent: \*$/m)
    assert.match(robots, /^Disallow: \/dashboard$/m)
    assert.match(robots, new RegExp(`^Sitemap: ${BASE_URL}/sitemap.xml$`, 'm'))
  })

  test('an unknown path is a real 404: short markdown, a page for browsers, the envelope for JSON and API paths', async () => {
    const markdown = await get('/no/such/page')
    assert.equal(markdown.status, 404)
    assert.equal(markdown.headers.get('content-type'), 'text/markdown; charset=utf-8')
    assert.match(markdown.headers.get('vary') ?? '', /Accept/)
    const body = await markdown.text()
    assert.match(body, /^# Not found\n/)
    assert.ok(body.length < 400, 'short')

    const page = await get('/no/such/page', 'text/html,application/xhtml+xml,*/*;q=0.8')
    assert.equal(page.status, 404)
    assert.match(await page.text(), /<h1>Not found<\/h1>/)

    const json = await get('/no/such/page', 'application/json')
    assert.equal(json.status, 404)
    assert.equal((await json.json()).error.code, 'NOT_FOUND')

    for (const path of ['/v1/no-such-route', '/.well-known/no-such-document', '/mcp/no-such-thing']) {
      const api = await get(path, 'text/html')
      assert.equal(api.status, 404, path)
      assert.equal((await api.json()).error.code, 'NOT_FOUND', `${path} answers in the envelope`)
    }
  })

  test('every link in the API index and in the protected-resource metadata resolves', async () => {
    const index = await (await get('/v1')).json()
    const links = Object.values(index).filter((v): v is string => typeof v === 'string' && v.startsWith('http'))
    assert.ok(links.length >= 6)
    for (const link of links) {
      const answer = await get(link, link.endsWith('/mcp') ? 'text/html' : undefined)
      assert.equal(answer.status, 200, `${link} resolves`)
    }
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const metadata = await (await get(path)).json()
      const docs = await get(metadata.resource_documentation, 'text/html')
      assert.equal(docs.status, 200, metadata.resource_documentation)
    }
  })

  test('the stylesheet and script are served for a year under their content tag', async () => {
    const html = await (await get('/', 'text/html')).text()
    for (const href of [captured(/href="(\/assets\/plinth\.css\?v=[^"]+)"/, html), captured(/src="(\/assets\/plinth\.js\?v=[^"]+)"/, html)]) {
      const asset = await get(href)
      assert.equal(asset.status, 200, href)
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    }
    assert.equal((await get('/assets/nope.css')).status, 404)
  })

  test('pages name an icon, and /favicon.ico answers with it rather than a 404', async () => {
    const html = await (await get('/', 'text/html')).text()
    const href = /<link rel="icon" href="(\/assets\/favicon\.svg\?v=[^"]+)" type="image\/svg\+xml">/.exec(html)?.[1]
    assert.ok(href, 'the layout links the icon')
    const linked = await get(href)
    assert.equal(linked.status, 200)
    assert.equal(linked.headers.get('content-type'), 'image/svg+xml')
    const svg = await linked.text()
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    const fallback = await get('/favicon.ico', 'image/avif,image/webp,image/*,*/*;q=0.8')
    assert.equal(fallback.status, 200)
    assert.equal(fallback.headers.get('content-type'), 'image/svg+xml')
    assert.equal(await fallback.text(), svg)
  })
})
