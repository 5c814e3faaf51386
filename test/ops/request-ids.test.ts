import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createLogger } from '../../src/log.ts'
import { Metrics } from '../../src/ops/metrics.ts'
import { PlinthResponse, rawRequestTracker } from '../../src/ops/request-tracking.ts'
import { createSite } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { parseExposition } from './exposition.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface LogLine {
  reqId?: string
  msg?: string
  level: number
  [key: string]: unknown
}

/** A logger at info level, writing its lines into `lines`. */
const infoLogInto = (lines: LogLine[]) => createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) })

/** A server like startTestServer's, logging at info level into `lines`. */
const startLoggedServer = (lines: LogLine[]): Promise<TestServer> => startTestServer('sqlite', { PLINTH_LOG_LEVEL: 'info' }, infoLogInto(lines))

describe('request ids (X-Request-Id)', () => {
  const lines: LogLine[] = []
  let server: TestServer
  let slug: string
  before(async () => {
    server = await startLoggedServer(lines)
    ;({ slug } = await createSite(server, { name: 'Traced', files: bundle('Traced') }))
  })
  after(() => server?.close())

  /** One request of each kind: the API, the web site, a published site, the OAuth server, and a URL Fastify's router refuses. */
  const surfaces = (headers: Record<string, string> = {}) => ({
    api: () => server.api('GET', '/v1', { headers }).then((res) => res.headers.get('x-request-id')),
    web: () => server.api('GET', '/', { headers }).then((res) => res.headers.get('x-request-id')),
    site: () => server.site(slug, '/', { headers }).then((res) => res.headers['x-request-id'] as string | undefined),
    siteMissing: () => server.site('no-such-site', '/', { headers }).then((res) => res.headers['x-request-id'] as string | undefined),
    oauth: () => server.api('GET', '/.well-known/oauth-authorization-server', { headers }).then((res) => res.headers.get('x-request-id')),
    badUrl: () => server.api('GET', '/v1/websites/%E0%A4%A', { headers }).then((res) => res.headers.get('x-request-id')),
    health: () => server.api('GET', '/healthz', { headers }).then((res) => res.headers.get('x-request-id')),
  })

  test('every kind of response carries a new id when the request came without one', async () => {
    const seen = new Set<string>()
    for (const [surface, request] of Object.entries(surfaces())) {
      for (let i = 0; i < 2; i++) {
        const id = await request()
        assert.match(id ?? '', UUID, surface)
        assert.ok(!seen.has(id!), `${surface}: a new id for each request`)
        seen.add(id!)
      }
    }
  })

  test('a sane incoming id is echoed', async () => {
    for (const given of ['a', 'req-42', '01HZX5K3Q8W7Y6V5T4S3R2P1N0', '7f3c5f9e-8b1d-4c2e-9a6f-0d1e2f3a4b5c', 'trace.span:01_ab', 'x'.repeat(128)]) {
      for (const [surface, request] of Object.entries(surfaces({ 'x-request-id': given }))) {
        assert.equal(await request(), given, `${surface} ${given}`)
      }
    }
  })

  test('an incoming id that is too long or has other characters is replaced', async () => {
    for (const given of ['x'.repeat(129), 'Root=1-67891233-abcdef', 'has space', 'quote"d', 'semi;colon', 'é', '<script>']) {
      for (const [surface, request] of Object.entries(surfaces({ 'x-request-id': given }))) {
        assert.match((await request()) ?? '', UUID, `${surface} ${JSON.stringify(given)}`)
      }
    }
  })

  test("an API request's log lines carry its id", async () => {
    await server.api('GET', '/v1/websites/web_unknown', { headers: { 'x-request-id': 'trace-api-1' } })
    const mine = lines.filter((line) => line.reqId === 'trace-api-1')
    assert.ok(mine.length >= 2, JSON.stringify(mine))
    assert.ok(mine.some((line) => line.msg === 'incoming request'))
    assert.ok(mine.some((line) => line.msg === 'request completed'))
  })

  test("a failing site request's log line carries its id, and so does its 500", async () => {
    // Files of the live version that are gone from the blob store, and not cached yet: reading them fails.
    await server.server.blobVariants.settled()
    rmSync(path.join(server.config.dataDir, 'blobs'), { recursive: true, force: true })
    const res = await server.site(slug, '/style.css', { headers: { 'x-request-id': 'trace-site-1' } })
    assert.equal(res.status, 500)
    assert.equal(res.headers['x-request-id'], 'trace-site-1')
    const failure = lines.find((line) => line.msg === 'site request failed' && line.reqId === 'trace-site-1')
    assert.ok(failure, JSON.stringify(lines.filter((line) => line.level >= 50)))
    assert.equal(failure.url, '/style.css')
  })
})

describe('rawRequestTracker (requests answered before Fastify)', () => {
  test('gives the response its id, counts it under its route, and logs an answer of 500 or more with the id', async () => {
    const lines: LogLine[] = []
    const metrics = new Metrics()
    const track = rawRequestTracker({ metrics, route: 'oauth', log: infoLogInto(lines) })
    const server = http.createServer({ ServerResponse: PlinthResponse }, (req, res) => {
      track(req, res)
      // Every way of giving a response its headers.
      if (req.url === '/object') res.writeHead(201, { 'Content-Type': 'text/plain' })
      else if (req.url === '/message') res.writeHead(202, 'Accepted here', ['Content-Type', 'text/plain'])
      else if (req.url === '/implicit') res.setHeader('Content-Type', 'text/plain')
      else if (req.url === '/own-id') res.writeHead(200, { 'X-Request-Id': 'set-by-the-handler' })
      else res.writeHead(req.url === '/fail' ? 502 : 200, ['Content-Type', 'text/plain'])
      res.end('answer')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const ok = await fetch(`${base}/fine`, { headers: { 'x-request-id': 'raw-ok' } })
      assert.equal(ok.headers.get('x-request-id'), 'raw-ok', 'kept beside headers given to writeHead as an array')
      assert.equal(ok.headers.get('content-type'), 'text/plain')
      for (const [url, status] of [
        ['/object', 201],
        ['/message', 202],
        ['/implicit', 200],
      ] as const) {
        const res = await fetch(`${base}${url}`, { headers: { 'x-request-id': `raw${url.replace('/', '-')}` } })
        assert.equal(res.status, status, url)
        assert.equal(res.headers.get('x-request-id'), `raw${url.replace('/', '-')}`, url)
        assert.equal(res.headers.get('content-type'), 'text/plain', url)
        assert.equal(await res.text(), 'answer')
      }
      const own = await fetch(`${base}/own-id`, { headers: { 'x-request-id': 'raw-own' } })
      assert.equal(own.headers.get('x-request-id'), 'set-by-the-handler', 'a handler that sets the header itself is not overruled')
      await own.text()
      const failed = await fetch(`${base}/fail`, { headers: { 'x-request-id': 'raw-fail' } })
      assert.equal(failed.status, 502)
      await failed.text()
      // 'finish' comes after the client has its answer: wait for the count.
      for (let i = 0; i < 100 && !lines.length; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.deepEqual(
        lines.map((line) => [line.reqId, line.msg, line.statusCode, line.url]),
        [['raw-fail', 'oauth request failed', 502, '/fail']],
      )
      const exposition = parseExposition(await metrics.registry.metrics())
      assert.equal(exposition.value('plinth_http_requests_total', { route: 'oauth', method: 'GET', status: '200' }), 3)
      assert.equal(exposition.value('plinth_http_requests_total', { route: 'oauth', method: 'GET', status: '201' }), 1)
      assert.equal(exposition.value('plinth_http_requests_total', { route: 'oauth', method: 'GET', status: '502' }), 1)
      assert.equal(exposition.value('plinth_http_request_duration_seconds_count', { route: 'oauth', method: 'GET' }), 6)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
