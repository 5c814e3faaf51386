import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Counter, Histogram, Registry } from 'prom-client'
import type { BlobFile, BlobStore } from '../../src/blobs/blob-store.ts'
import { type BlobOperation, InstrumentedBlobStore } from '../../src/blobs/instrumented-blob-store.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { REQUEST_SECONDS, RequestMetrics } from '../../src/ops/request-metrics.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { type Exposition, parseExposition } from './exposition.ts'

const METRICS_TOKEN = 'ops-test-metrics-token-0123456789'

async function scrape(server: TestServer, token?: string): Promise<Exposition> {
  const res = await server.api('GET', '/metrics', { token })
  assert.equal(res.status, 200, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  return parseExposition(res.text)
}

for (const store of STORES) {
  describe(`GET /metrics (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: Awaited<ReturnType<TestServer['user']>>
    before(async () => {
      server = await startTestServer(store.name)
      owner = await server.user()
    })
    after(() => server?.close())

    test('a publish and site requests move the counters by what they did', async () => {
      const before = await scrape(server)
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Metered', category: 'other', files: bundle('Metered') } })
      assert.equal(created.status, 201, created.text)
      const version = await server.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token, body: { files: bundle('Metered 2') } })
      assert.equal(version.status, 201, version.text)
      const slug = created.body.slug as string
      for (let i = 0; i < 3; i++) assert.equal((await server.site(slug, '/')).status, 200)
      assert.equal((await server.site(slug, '/style.css')).status, 200)
      assert.equal((await server.site(slug, '/missing')).status, 404)
      const now = await scrape(server)
      const moved = (name: string, labels?: Record<string, string>) => now.value(name, labels) - before.value(name, labels)

      assert.equal(moved('plinth_publishes_total'), 2)
      assert.equal(moved('plinth_published_bytes_total'), created.body.bytesWritten + version.body.bytesWritten)
      assert.equal(now.types.get('plinth_publishes_total'), 'counter')

      // Requests by route pattern, never by raw URL; site requests under one route.
      assert.equal(moved('plinth_http_requests_total', { route: '/v1/websites', method: 'POST', status: '201' }), 1)
      assert.equal(moved('plinth_http_requests_total', { route: '/v1/websites/:websiteId/versions', method: 'POST', status: '201' }), 1)
      assert.equal(moved('plinth_http_requests_total', { route: 'site', method: 'GET', status: '200' }), 4)
      assert.equal(moved('plinth_http_requests_total', { route: 'site', method: 'GET', status: '404' }), 1)
      assert.ok(!now.samples.some((s) => s.labels.route?.includes(created.body.websiteId)), 'no raw URL as a route')
      assert.equal(now.types.get('plinth_http_request_duration_seconds'), 'histogram')
      assert.equal(moved('plinth_http_request_duration_seconds_count', { route: 'site', method: 'GET' }), 5)
      const siteBuckets = now.find('plinth_http_request_duration_seconds_bucket', { route: 'site', method: 'GET' })
      assert.equal(
        siteBuckets.find((s) => s.labels.le === '+Inf')?.value,
        now.value('plinth_http_request_duration_seconds_count', { route: 'site', method: 'GET' }),
      )
      assert.ok(moved('plinth_http_request_duration_seconds_sum', { route: 'site', method: 'GET' }) > 0)

      // The first request of the new live version loads its manifest; the others are answered from the cache.
      assert.ok(moved('plinth_serving_cache_misses_total', { cache: 'manifest' }) >= 1)
      assert.ok(moved('plinth_serving_cache_hits_total', { cache: 'manifest' }) >= 3)
      assert.ok(moved('plinth_serving_cache_hits_total', { cache: 'blob' }) >= 2, 'index.html read from the store once, then from the cache')
      assert.ok(moved('plinth_serving_cache_misses_total', { cache: 'blob' }) >= 1)
      assert.ok(now.value('plinth_serving_cache_bytes') > 0)
      assert.ok(now.value('plinth_serving_cache_entries', { cache: 'manifest' }) >= 1)
      assert.ok(now.value('plinth_serving_cache_entries', { cache: 'blob' }) >= 1)

      // The publishes wrote blobs and the site server read them.
      assert.ok(moved('plinth_blob_store_duration_seconds_count', { operation: 'put' }) >= 2)
      assert.ok(moved('plinth_blob_store_duration_seconds_count', { operation: 'get' }) >= 1)
      assert.equal(now.types.get('plinth_blob_store_duration_seconds'), 'histogram')
      assert.equal(moved('plinth_blob_store_errors_total'), 0)
    })

    test('requests that match no route are counted once, as unmatched', async () => {
      const before = await scrape(server)
      assert.equal((await server.api('GET', '/no/such/path', { headers: { accept: 'application/json' } })).status, 404)
      assert.equal((await server.api('GET', '/v1/websites/%E0%A4%A')).status, 404, 'a URL the router refuses')
      const now = await scrape(server)
      const unmatched = { route: 'unmatched', method: 'GET', status: '404' }
      assert.equal(now.value('plinth_http_requests_total', unmatched) - before.value('plinth_http_requests_total', unmatched), 2)
      assert.ok(!now.samples.some((s) => s.labels.route?.includes('no/such')))
    })

    test('the process metrics are there under their standard names', async () => {
      const metrics = await scrape(server)
      for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
        assert.ok(metrics.find(name).length > 0, name)
      }
    })

    test(store.name === 'postgres' ? 'the database pool use is exposed' : 'SQLite has no pool: no pool metrics', async () => {
      const metrics = await scrape(server)
      const names = ['plinth_db_pool_connections', 'plinth_db_pool_idle_connections', 'plinth_db_pool_waiting_queries', 'plinth_db_pool_max_connections']
      if (store.name === 'sqlite') {
        for (const name of names) assert.equal(metrics.find(name).length, 0, name)
        return
      }
      const total = metrics.value('plinth_db_pool_connections')
      assert.ok(total >= 1, 'the requests above opened connections')
      assert.equal(metrics.value('plinth_db_pool_max_connections'), 10)
      assert.ok(total <= 10)
      assert.ok(metrics.value('plinth_db_pool_idle_connections') <= total)
      assert.ok(metrics.value('plinth_db_pool_waiting_queries') >= 0)
    })

    test('a failing blob store read is counted as an error of its operation', async () => {
      const before = await scrape(server)
      await assert.rejects(server.server.blobs.get('0'.repeat(64)))
      const now = await scrape(server)
      assert.equal(now.value('plinth_blob_store_errors_total', { operation: 'get' }) - before.value('plinth_blob_store_errors_total', { operation: 'get' }), 1)
    })
  })
}

describe('the metrics token (PLINTH_METRICS_TOKEN)', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { PLINTH_METRICS_TOKEN: METRICS_TOKEN })
  })
  after(() => server?.close())

  test('without the token, with a wrong one or a malformed header: 401 in the error envelope', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}` },
      { authorization: `Basic ${Buffer.from(`prometheus:${METRICS_TOKEN}`).toString('base64')}` },
      { authorization: METRICS_TOKEN },
    ]
    for (const headers of cases) {
      const res = await server.api('GET', '/metrics', { headers })
      assert.equal(res.status, 401, JSON.stringify(headers))
      assert.equal(res.body?.error?.code, 'AUTH_REQUIRED')
      assert.match(res.body.error.message, /PLINTH_METRICS_TOKEN/)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"')
      assert.ok(!res.text.includes('plinth_'), 'no metric leaks')
    }
  })

  test('with the token: 200', async () => {
    const metrics = await scrape(server, METRICS_TOKEN)
    assert.ok(metrics.find('plinth_http_requests_total').length > 0)
    const lowercase = await server.api('GET', '/metrics', { headers: { authorization: `bearer ${METRICS_TOKEN}` } })
    assert.equal(lowercase.status, 200, 'the scheme is case-insensitive')
  })

  test('health and readiness stay open', async () => {
    assert.equal((await server.api('GET', '/healthz')).status, 200)
    assert.equal((await server.api('GET', '/readyz')).status, 200)
  })

  test('a token too short to be a secret is refused at start', () => {
    assert.throws(
      () => loadConfig({ PLINTH_METRICS_TOKEN: 'short' }),
      (error: unknown) => error instanceof ConfigError && /PLINTH_METRICS_TOKEN/.test(error.message),
    )
    assert.throws(() => loadConfig({ PLINTH_METRICS_TOKEN: 'has a space in it, sixteen+' }), ConfigError)
    assert.equal(loadConfig({ PLINTH_METRICS_TOKEN: METRICS_TOKEN }).metricsToken, METRICS_TOKEN)
    assert.equal(loadConfig({}).metricsToken, null)
  })
})

describe('InstrumentedBlobStore', () => {
  test('reports each call with its time and outcome, and passes results and errors through', async () => {
    const missing = Object.assign(new Error('missing'), { code: 'ENOENT' })
    const file: BlobFile = { name: 'a', hash: null, encoding: null, bytes: 1, modifiedMs: 0 }
    const files = [file]
    const inner: BlobStore = {
      has: () => Promise.resolve(true),
      put: async () => {},
      get: () => Promise.reject(missing),
      delete: async () => {},
      // eslint-disable-next-line @typescript-eslint/require-await -- the store's listing is an async iterable; this one has its files at hand
      list: async function* () {
        yield* files
      },
      removeIfOlder: () => Promise.resolve(false),
      settled: async () => {},
      check: () => {
        throw new Error('thrown before any promise')
      },
      close: async () => {},
    }
    const seen: Array<[BlobOperation, boolean]> = []
    const store = new InstrumentedBlobStore(inner, {
      observe: (operation, seconds, failed) => {
        assert.ok(seconds >= 0 && seconds < 5)
        seen.push([operation, failed])
      },
    })
    assert.equal(await store.has('h'), true)
    await store.put('h', Buffer.from('x'))
    await assert.rejects(store.get('h'), (error) => error === missing)
    await assert.rejects(store.check(), /thrown before any promise/)
    const listed: BlobFile[] = []
    for await (const file of store.list()) listed.push(file)
    assert.deepEqual(listed, files)
    assert.equal(await store.removeIfOlder(file, 0), false)
    assert.deepEqual(seen, [
      ['has', false],
      ['put', false],
      ['get', true],
      ['check', true],
      ['list', false],
      ['removeIfOlder', false],
    ])
  })
})

describe('RequestMetrics', () => {
  test("exposes exactly what prom-client's own counter and histogram would for the same requests", async () => {
    const recorded = new Registry()
    const metrics = new RequestMetrics(recorded, 'plinth_http')
    const reference = new Registry()
    const labelNames = ['route', 'method', 'status'] as const
    const requests = new Counter({ name: 'plinth_http_requests_total', help: 'h', labelNames, registers: [reference] })
    const seconds = new Histogram({
      name: 'plinth_http_request_duration_seconds',
      help: 'h',
      labelNames: ['route', 'method'],
      buckets: REQUEST_SECONDS,
      registers: [reference],
    })
    const seen: Array<[string, string, number, number]> = [
      ['site', 'GET', 200, 0.0004],
      ['site', 'GET', 200, 0.0005],
      ['site', 'GET', 404, 0.003],
      ['/v1', 'GET', 200, 12],
      ['site', 'HEAD', 200, 0],
      ['/v1/websites/:websiteId', 'GET', 200, 0.02],
      ['/v1/websites/:websiteId', 'GET', 200, 10],
    ]
    for (const [route, method, status, value] of seen) {
      metrics.record(route, method, status, value)
      requests.inc({ route, method, status })
      seconds.observe({ route, method }, value)
    }
    // The same samples and types; the order of lines and of labels within a line may differ.
    const canonical = async (registry: Registry) => {
      const { samples, types } = parseExposition(await registry.metrics())
      const lines = samples.map(({ name, labels, value }) => `${name}${JSON.stringify(Object.entries(labels).sort())} ${value}`).sort()
      return { lines, types: [...types].sort() }
    }
    const expected = await canonical(reference)
    assert.equal(expected.lines.length, 5 + 4 * (REQUEST_SECONDS.length + 3))
    assert.deepEqual(await canonical(recorded), expected)
  })
})
