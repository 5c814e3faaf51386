/**
 * What an unknown path answers, over real HTTP with the path sent byte for byte: the JSON error
 * envelope for the API's paths, for paths that look like the API's when the client names no type
 * (or `*\/*`, or JSON), and for every path of a separate API host; the web site's 404 page or
 * markdown for a person who asks for it, and markdown by default elsewhere.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { startTestServer, type TestServer } from '../helpers/server.ts'

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

/** A GET of `path` exactly as written (no URL normalisation), with the given headers. */
function rawGet(server: TestServer, path: string, headers: Record<string, string>): Promise<RawResponse> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
/** Accept headers of a client that names no type or asks for JSON; undefined sends none. */
const JSON_CLIENTS = [undefined, '*/*', 'application/json', 'application/json, text/plain, */*']

/** The API's own namespace: the envelope whatever is asked. */
const API_PATHS = ['/v1/nope', '/v1/websites/web_x/nope', '/v1//websites', '/mcp/nope', '/oauth/nope', '/oauth/tokens', '/oauth/', '/.well-known/nope']

/** Paths that only look like the API's, as a fuzzer or a careless client sends them. */
const API_LIKE_PATHS = [
  '/V1',
  '/V1/websites',
  '//v1',
  '//v1/websites',
  '///V1//jobs/job_x',
  '/v1%2f',
  '/v1%2Fwebsites',
  '/%76%31/nope',
  '/%56%31/websites',
  '/v1%252fwebsites',
  '/v1;x=1',
  '/./v1/websites',
  '/..%2fv1/websites',
  '/v1\\websites',
  '/api',
  '/api/v1/websites',
  '/API/V1',
  '/v2/websites',
  '/OpenAPI.json',
  '/openapi.json/',
  '//openapi.json',
  '/openapi.yaml',
  '/swagger.json',
  '/MCP/tools',
  '/oauth',
  '/OAuth/token',
  '//oauth/nope',
  '/.well-known',
]

/** Paths of the web site for people. */
const SITE_PATHS = ['/nope', '/docs/nope/deeper', '/v1x', '/dashboardz', '/apiary']

function assertEnvelope(res: RawResponse, what: string) {
  assert.equal(res.status, 404, what)
  assert.match(res.headers['content-type'] ?? '', /^application\/json(;|$)/, what)
  const body = JSON.parse(res.text)
  assert.deepEqual(Object.keys(body), ['error'], what)
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message'], what)
  assert.equal(body.error.code, 'NOT_FOUND', what)
  assert.match(body.error.message, /^No route GET /, what)
}

function assertPage(res: RawResponse, what: string) {
  assert.equal(res.status, 404, what)
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', what)
  assert.match(res.text, /<h1>Not found<\/h1>/, what)
  assert.match(res.headers.vary ?? '', /Accept/, what)
}

function assertMarkdown(res: RawResponse, what: string) {
  assert.equal(res.status, 404, what)
  assert.equal(res.headers['content-type'], 'text/markdown; charset=utf-8', what)
  assert.match(res.text, /^# Not found\n/, what)
  assert.match(res.headers.vary ?? '', /Accept/, what)
}

/** The shared-origin rules, on a host that serves the web site. */
function webSiteRules(get: (path: string, accept: string | undefined) => Promise<RawResponse>) {
  test('an unknown path of the API namespace is the envelope, whatever the client asks for', async () => {
    for (const path of API_PATHS) {
      for (const accept of [...JSON_CLIENTS, 'text/html', BROWSER, 'text/markdown']) assertEnvelope(await get(path, accept), `${path} (${accept})`)
    }
  })

  test('a path that looks like the API is the envelope for a client that names no type or asks for JSON', async () => {
    for (const path of API_LIKE_PATHS) {
      for (const accept of JSON_CLIENTS) {
        const res = await get(path, accept)
        assertEnvelope(res, `${path} (${accept})`)
        assert.match(res.headers.vary ?? '', /Accept/, `${path}: the answer depends on Accept`)
      }
    }
  })

  test('a path that looks like the API is the 404 page for a browser and markdown for Accept: text/markdown', async () => {
    for (const path of API_LIKE_PATHS) {
      assertPage(await get(path, 'text/html'), `${path} (text/html)`)
      assertPage(await get(path, BROWSER), `${path} (browser)`)
      assertMarkdown(await get(path, 'text/markdown'), `${path} (text/markdown)`)
    }
  })

  test('a path of the web site keeps its 404: markdown by default, a page for a browser, the envelope for JSON', async () => {
    for (const path of SITE_PATHS) {
      assertMarkdown(await get(path, undefined), `${path} (no Accept)`)
      assertMarkdown(await get(path, '*/*'), `${path} (*/*)`)
      assertMarkdown(await get(path, 'text/markdown'), `${path} (text/markdown)`)
      assertPage(await get(path, BROWSER), `${path} (browser)`)
      assertEnvelope(await get(path, 'application/json'), `${path} (application/json)`)
    }
  })

  test('a long unknown path is not echoed in full', async () => {
    const long = `/V1/${'x'.repeat(5000)}`
    const res = await get(long, undefined)
    assertEnvelope(res, 'long path')
    const message: string = JSON.parse(res.text).error.message
    assert.ok(message.length < 260, `the message is short (${message.length} characters)`)
    assert.match(message, /…\.$/)
  })
}

describe('unknown paths where the API and the web site share an origin', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(async () => server?.close())

  webSiteRules((path, accept) => rawGet(server, path, accept === undefined ? {} : { accept }))

  test('known pages and API routes are untouched', async () => {
    assert.equal((await rawGet(server, '/v1', {})).status, 200)
    assert.equal((await rawGet(server, '/openapi.json', {})).status, 200)
    assert.equal((await rawGet(server, '/docs', { accept: 'text/html' })).status, 200)
  })
})

describe('unknown paths when the API has a host of its own', () => {
  const API_HOST = 'api.plinth.example:8080'
  const WEB_HOST = 'www.plinth.example:8080'
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { PLINTH_BASE_URL: `http://${API_HOST}`, PLINTH_SITE_URL: `http://${WEB_HOST}` })
  })
  after(async () => server?.close())

  test('every unknown path on the API host is the envelope, whatever the client asks for', async () => {
    for (const host of [API_HOST, API_HOST.toUpperCase()]) {
      for (const path of [...API_PATHS, ...API_LIKE_PATHS, ...SITE_PATHS]) {
        for (const accept of [...JSON_CLIENTS, 'text/html', BROWSER, 'text/markdown']) {
          const headers: Record<string, string> = { host, ...(accept === undefined ? {} : { accept }) }
          assertEnvelope(await rawGet(server, path, headers), `${host}${path} (${accept})`)
        }
      }
    }
  })

  describe('on the web site host', () => {
    webSiteRules((path, accept) => rawGet(server, path, { host: WEB_HOST, ...(accept === undefined ? {} : { accept }) }))
  })
})
