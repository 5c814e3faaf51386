/**
 * What a flood of hostile requests can make the server remember stays bounded: the Host memo
 * (every request asks it), the per-version memo of `_headers` results by path, and the request
 * metrics' series, after thousands of distinct hosts, paths and methods.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { MAX_HOST_CHARS } from '../../src/core/limits.ts'
import { parseHeaders } from '../../src/publishing/header-rules.ts'
import { HOST_MEMO_LIMIT, SiteHosts } from '../../src/serving/site-host.ts'
import { HEADER_MEMO_LIMIT, HEADER_MEMO_PATH_CHARS, siteHeadersFor } from '../../src/serving/site-header-rules.ts'
import { prepareVersion } from '../../src/serving/site-version.ts'
import { bundle, SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'
import { parseExposition } from '../ops/exposition.ts'

const DOMAIN = 'sites.example.test'

describe('the Host memo', () => {
  test('never holds more than its cap of Host values, and still answers right after a flood', () => {
    const hosts = new SiteHosts(DOMAIN, ['api.example.test'], null)
    for (let i = 0; i < HOST_MEMO_LIMIT * 3; i++) {
      assert.equal(hosts.entry(`random-${i}.elsewhere.test`), null)
      assert.ok(hosts.size <= HOST_MEMO_LIMIT, `${hosts.size} Host values remembered after ${i + 1}`)
    }
    for (let i = 0; i < HOST_MEMO_LIMIT * 2; i++) hosts.entry(`site-${i}--v${i}.${DOMAIN}`)
    assert.ok(hosts.size <= HOST_MEMO_LIMIT)
    assert.deepEqual(hosts.entry(`bakery.${DOMAIN}`), { label: 'bakery', site: { slug: 'bakery', version: null } })
    assert.deepEqual(hosts.entry(`bakery--v3.${DOMAIN}:8080`), { label: 'bakery--v3', site: { slug: 'bakery', version: 3 } })
    assert.equal(hosts.entry('api.example.test'), null, 'a service host is never a site')
  })

  test('does not remember Host values too long to name a site, and answers them as no site', () => {
    const hosts = new SiteHosts(DOMAIN, [], null)
    const before = hosts.size
    for (let i = 0; i < 100; i++) {
      const long = `${'a'.repeat(MAX_HOST_CHARS + i)}.${DOMAIN}`
      assert.equal(hosts.entry(long), null)
      assert.equal(hosts.entry(`${'b'.repeat(8000)}-${i}`), null)
    }
    assert.equal(hosts.size, before, 'nothing remembered')
    assert.equal(hosts.entry(undefined), null)
  })
})

describe("the memo of a version's _headers by path", () => {
  const { version } = prepareVersion({ websiteId: 'web_1', slug: 'bakery', versionId: 'job_1', number: 1, files: [] }, { label: 'bakery', preview: false })
  version.headerRules = parseHeaders('/*\n  X-Robots-Tag: noarchive\n/assets/*\n  Cache-Control: public, max-age=60\n').rules

  test('holds at most its cap of paths, and every path still gets its headers', () => {
    for (let i = 0; i < HEADER_MEMO_LIMIT * 2; i++) {
      const headers = siteHeadersFor(version, `/assets/${i}.css`)
      assert.deepEqual(
        headers.map(([name]) => name.toLowerCase()),
        ['x-robots-tag', 'cache-control'],
      )
      assert.ok(version.headerMemo.size <= HEADER_MEMO_LIMIT, `${version.headerMemo.size} paths remembered`)
    }
  })

  test('does not remember long paths, and gives them the same headers as short ones', () => {
    version.headerMemo.clear()
    for (let i = 0; i < 200; i++) {
      const path = `/assets/${'x'.repeat(HEADER_MEMO_PATH_CHARS + i)}.css`
      assert.deepEqual(siteHeadersFor(version, path), siteHeadersFor(version, '/assets/short.css'))
    }
    assert.deepEqual([...version.headerMemo.keys()], ['/assets/short.css'])
  })
})

describe('request metrics after 1,000 distinct hosts, paths and methods', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(() => server?.close())

  /** A raw request with any Host, method and path; resolves to the status. */
  function send(host: string, method: string, path: string): Promise<number> {
    const { port } = new URL(server.url)
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, method, headers: { host }, agent: false }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end()
    })
  }

  const seriesOf = async () => {
    const res = await server.api('GET', '/metrics')
    assert.equal(res.status, 200)
    return parseExposition(res.text).samples.filter((s) => s.name === 'plinth_http_requests_total')
  }

  test('add a handful of series, none named after a host or a path', async () => {
    const owner = await server.user()
    const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Counted', category: 'other', files: bundle('Counted') } })
    assert.equal(created.status, 201, created.text)
    const before = await seriesOf()
    const methods = ['GET', 'POST', 'DELETE', 'PATCH']
    for (let i = 0; i < 1000; i++) {
      const marker = `zq${i}x`
      const host = i % 2 === 0 ? `${marker}.${SITE_DOMAIN}` : i % 3 === 0 ? `${created.body.slug}.${SITE_DOMAIN}` : `api.plinth.test:8080`
      assert.ok((await send(host, methods[i % methods.length]!, `/${marker}/page-${i}`)) >= 200)
    }
    const series = await seriesOf()
    const added = series.length - before.length
    assert.ok(added <= 20, `${added} series added by 1,000 distinct hosts and paths`)
    const named = series.filter((s) => Object.values(s.labels).some((v) => /zq\d+x/.test(String(v))))
    assert.deepEqual(named, [], 'no series is named after a request')
  })
})
